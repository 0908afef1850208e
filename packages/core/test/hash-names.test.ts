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
    expect(one('fixedWindow')).toBe('caa87194ec309f7e7123f84a9cb2db47665b6e4f');
    expect(one('slidingWindow')).toBe('25c441e4b138a93ea35ac49bfa8037f1fb7c699d');
    expect(one('slidingWindowLog')).toBe('14e0dbce484442c8c0fb0a8f944783fda5dd619a');
    expect(one('tokenBucket')).toBe('3153f1755a8940007092e7e07b7accba3591c119');
    expect(one('leakyBucket')).toBe('22513bc477d99bc55d8c2de0ef4cea0571482b51');
    expect(one('quota')).toBe('ddcdaa34933fde7dccc3980934b42a1908a3e820');
    // The five rate kinds together: the same script as before quota existed.
    expect(compileScript('one', FIVE).sha1).toBe('cbba9a19d9ec1d7abd40fb0fe148cc1bd2ad5ff5');
    expect(compileScript('one', [...POLICY_KINDS]).sha1).toBe(
      '4d2684377f80dc2a98a555d8711cd3401753bad2',
    );
    expect(batch('fixedWindow')).toBe('d08d537e22d6f5613508764fa691b94e4e0fce53');
    expect(batch('slidingWindow')).toBe('ad1cd7bc3eb942563f4e5216a1798af253e28041');
    expect(batch('slidingWindowLog')).toBe('e39016588265fc3ed24504357d092b680721f052');
    expect(batch('tokenBucket')).toBe('3e976658bd050cecf7a2421574c696367e2ad25c');
    expect(batch('leakyBucket')).toBe('875a86b8d59db355d14f2f834add61f262a6f184');
    expect(batch('quota')).toBe('1d039dd300d34846feefc4266ec43c8efe24bfcf');
    expect(compileScript('batch', FIVE).sha1).toBe('b3cc6c95e125f484f790978fe99f2858abd3a659');
    expect(compileScript('batch', [...POLICY_KINDS]).sha1).toBe(
      '30bbe7b64859db3e87d217e426beeed34422a197',
    );
  });
});
