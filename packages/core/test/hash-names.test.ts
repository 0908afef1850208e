// Key names and script SHA-1s are persisted state: a Redis holding `api:{user}:tb:NBQNv` keeps
// counting under that name across upgrades, and EVALSHA finds a script by its SHA-1. These pins
// were computed with node:crypto before core moved to a pure-JS hash; they must never change.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha1Hex, sha256Base64url, utf8Length } from '../src/hash.js';
import {
  fixedWindow,
  leakyBucket,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import { encodeIdentity } from '../src/keys.js';
import { POLICY_KINDS } from '../src/policies/kinds.js';
import { compileScript } from '../src/redis/lua.js';

describe('key names', () => {
  it('policy ids are those computed with node:crypto', () => {
    expect(tokenBucket({ limit: 100, interval: '1m' }).id).toBe('tb:NBQNv');
    expect(fixedWindow({ limit: 10, window: '1s' }).id).toBe('fw:EDGTM');
    expect(slidingWindow({ limit: 5, window: '10s' }).id).toBe('sw:glzdo');
    expect(slidingWindowLog({ limit: 3, window: '1m' }).id).toBe('swl:QxBtZ');
    expect(leakyBucket({ limit: 10, interval: '1s', queue: 5 }).id).toBe('lb:Zd-nw');
  });

  it('blockFor does not enter the policy id: the counts stay where they were', () => {
    expect(tokenBucket({ limit: 100, interval: '1m', blockFor: '1h' }).id).toBe('tb:NBQNv');
    expect(fixedWindow({ limit: 10, window: '1s', blockFor: 500 }).id).toBe('fw:EDGTM');
  });

  it('long identities hash to the names computed with node:crypto', () => {
    expect(encodeIdentity('x'.repeat(300))).toBe('#DU4sqenLztenpTgOsp4aN4O5ttDbct42oQUQOOHB-8c');
    expect(encodeIdentity('é'.repeat(200))).toBe('#3yCyqmJi6Z4TOqfzYUvnB9NcQVXRfiqny7SdpVWkVMM');
    expect(encodeIdentity('{'.repeat(100))).toBe('#CeGLXlbY4ClOZGjrvzrHgOWFnXfWf19DELnb1QT7k_M');
  });

  it('any long identity hashes as node:crypto SHA-256 (base64url) of its escaped form', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 90, maxLength: 400 }), (s) => {
        const name = encodeIdentity(s);
        if (!name.startsWith('#')) return;
        const escaped = s.replace(
          /[%{}#]/g,
          (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
        );
        expect(name).toBe(`#${createHash('sha256').update(escaped, 'utf8').digest('base64url')}`);
      }),
    );
  });

  it('the hash/no-hash boundary counts UTF-8 bytes as node does', () => {
    const units = fc.constantFrom('a', 'é', '€', '😀', 'Ω', 'z');
    fc.assert(
      fc.property(fc.array(units, { minLength: 60, maxLength: 200 }), (chars) => {
        const s = chars.join('');
        expect(encodeIdentity(s).startsWith('#')).toBe(Buffer.byteLength(s, 'utf8') > 256);
      }),
    );
  });
});

describe('the pure-JS hash', () => {
  it('gives node:crypto digests and UTF-8 lengths for any string, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => {
        expect(sha1Hex(s)).toBe(createHash('sha1').update(s).digest('hex'));
        expect(sha256Base64url(s)).toBe(createHash('sha256').update(s).digest('base64url'));
        expect(utf8Length(s)).toBe(Buffer.byteLength(s, 'utf8'));
      }),
    );
  });
});

describe('script SHA-1s', () => {
  it('every script names itself by the SHA-1 Redis computes for SCRIPT LOAD', () => {
    for (const variant of ['one', 'batch'] as const) {
      for (const kinds of [...POLICY_KINDS.map((k) => [k]), [...POLICY_KINDS]]) {
        const { source, sha1 } = compileScript(variant, kinds);
        expect(sha1).toBe(createHash('sha1').update(source).digest('hex'));
      }
    }
  });

  // These change only when the Lua does; update them with it.
  const FIVE = POLICY_KINDS.filter((k) => k !== 'quota');
  it("today's scripts keep today's SHA-1s", () => {
    const one = (k: (typeof POLICY_KINDS)[number]) => compileScript('one', [k]).sha1;
    const batch = (k: (typeof POLICY_KINDS)[number]) => compileScript('batch', [k]).sha1;
    expect(one('fixedWindow')).toBe('2d7ba3f824aff03db23305b13875473bd0de85f6');
    expect(one('slidingWindow')).toBe('17dbcd6d1730f15ed22c6f1c8093a52773a00692');
    expect(one('slidingWindowLog')).toBe('2ab665ac570160323d725fb2d02af76d594f0319');
    expect(one('tokenBucket')).toBe('da8351c3c8a63aeb255666ed07aff888ccc9a8ec');
    expect(one('leakyBucket')).toBe('da968cef0df348d535bfe19f686279eea1f520a0');
    expect(one('quota')).toBe('6abfaf63fe834607154bb609cbe4736de17e13a1');
    // The five rate kinds together.
    expect(compileScript('one', FIVE).sha1).toBe('f33d9c035f94c0490c79d64e97863525afcbef95');
    expect(compileScript('one', [...POLICY_KINDS]).sha1).toBe(
      '183a494f1d7fa4f3dea54cdc18c12911a94b1201',
    );
    expect(batch('fixedWindow')).toBe('13a583ed5943f927987effd5b6685af762ad9162');
    expect(batch('slidingWindow')).toBe('ff22bf3c104f40318ef80d18b01b96a834f9dbfa');
    expect(batch('slidingWindowLog')).toBe('c4e59a9bb3ec767969395d5ebb205125b0a294d0');
    expect(batch('tokenBucket')).toBe('2706021679fcd0c5dd51465cc60f39fd9faa9d1e');
    expect(batch('leakyBucket')).toBe('1bff88762fd82f3ba61f680cc22fc62ce8db6e9c');
    expect(batch('quota')).toBe('0078eddf9a8321755376bba2c46367e167df8aa4');
    expect(compileScript('batch', FIVE).sha1).toBe('969a61033e9fc4c0ae973c6163c38a605ed5906f');
    expect(compileScript('batch', [...POLICY_KINDS]).sha1).toBe(
      'c2484091885164d92ac368355fba2551a35cfac2',
    );
  });
});
