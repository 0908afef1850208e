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
    expect(one('fixedWindow')).toBe('92394a27935cc487addb41827e1a014cbce676bd');
    expect(one('slidingWindow')).toBe('d501876a238bc0b2575afc017f83f8b14bbf64d4');
    expect(one('slidingWindowLog')).toBe('b255a7f3a4cc1c73520de1dbcf78ec4fe7149b48');
    expect(one('tokenBucket')).toBe('9f9187dce248016c22185816e54bc3ebc40457a9');
    expect(one('leakyBucket')).toBe('928647a7f608a42e45ec308561ac6383219fb48c');
    expect(one('quota')).toBe('5c6d818c19bc79171ab6902f9796a4facf473434');
    // The five rate kinds together.
    expect(compileScript('one', FIVE).sha1).toBe('ac50e074596d050098b0ea47b39bac58f958a45c');
    expect(compileScript('one', [...POLICY_KINDS]).sha1).toBe(
      'b78c36c7f4477896298bf59438665f078d30e90e',
    );
    expect(batch('fixedWindow')).toBe('f081af5a9a99e70ca85c070dbc30e5d5a14bc98f');
    expect(batch('slidingWindow')).toBe('42f826b5e9078a456259d3a8a8c68ed6ff4959ca');
    expect(batch('slidingWindowLog')).toBe('438d94ae143991f00cb78a3fb363d6c3b2d330f6');
    expect(batch('tokenBucket')).toBe('5b1fe4149a83395d0e7c8920374317f8609db6b7');
    expect(batch('leakyBucket')).toBe('48b4ee333c1e9174fc55ea9ed188d01cc2d0c38d');
    expect(batch('quota')).toBe('67aae1e554bdc60f3b53178a5f6a7c323210fcae');
    expect(compileScript('batch', FIVE).sha1).toBe('ab28d5d79035952c6a4a259618f87659f7f0ee67');
    expect(compileScript('batch', [...POLICY_KINDS]).sha1).toBe(
      '314023ee253883fabbb0e82368bd933d621507b8',
    );
  });
});
