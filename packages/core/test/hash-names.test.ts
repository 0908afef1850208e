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
    expect(one('fixedWindow')).toBe('b5d1db5e836794f761d751c1f599fa544ff9bb52');
    expect(one('slidingWindow')).toBe('5d43bf2bfd9544678df5d3c3847fb8922bda1e22');
    expect(one('slidingWindowLog')).toBe('51eab31213ecefb96e675f4e5ead1ed3b092615f');
    expect(one('tokenBucket')).toBe('56493f30e8e837712cec0a107ae0690948a12eff');
    expect(one('leakyBucket')).toBe('07796d190c28e48452c429eddffb3bf13eaceee8');
    expect(one('quota')).toBe('49ca41fca7652bc377d4dd1f581619421f85bd96');
    // The five rate kinds together.
    expect(compileScript('one', FIVE).sha1).toBe('6e30997f64091421362630dd61fd0c8e03829a84');
    expect(compileScript('one', [...POLICY_KINDS]).sha1).toBe(
      '3dd12144aefec5ec327ad3bb925f9bcf1c661c7d',
    );
    expect(batch('fixedWindow')).toBe('fa6cf2796e4e37b785ea969144017eeb83f94b99');
    expect(batch('slidingWindow')).toBe('68347112ab0fdfc36cbd804bdcc07ee730bec6f7');
    expect(batch('slidingWindowLog')).toBe('dc19a03c5ba08a139ec0f630670f15bfc8b89b8f');
    expect(batch('tokenBucket')).toBe('52b9aa57a2b1f59e46b050d7a4569a6a2ceca3bf');
    expect(batch('leakyBucket')).toBe('9b2f79eb614a442c4da0d86daa50bc6ee2b83120');
    expect(batch('quota')).toBe('770cc7a67fe2060b132264b093990d8230ef43c7');
    expect(compileScript('batch', FIVE).sha1).toBe('8e2bf60a228d6aa5279b05a2e4ca2cf5c175abcc');
    expect(compileScript('batch', [...POLICY_KINDS]).sha1).toBe(
      '5be3906029f61aadac2f44aa50c1a1a4593f79ad',
    );
  });
});
