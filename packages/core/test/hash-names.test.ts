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
    expect(batch('fixedWindow')).toBe('7ee8db8267b16c29cacdb737c38eec20da2ed36b');
    expect(batch('slidingWindow')).toBe('cafbf17c684e09262e0196e23bf19c1399cecbe5');
    expect(batch('slidingWindowLog')).toBe('e3527662eb1024c3343967f3f7bb95073cdd220f');
    expect(batch('tokenBucket')).toBe('065075936ddfddf671430a669dc4ede11f556030');
    expect(batch('leakyBucket')).toBe('36f3037b83c6c75914d0e6c3524c4b43b32344d1');
    expect(batch('quota')).toBe('3e328607a005d60da4d21a8c4318968b9cd2b1a3');
    expect(compileScript('batch', FIVE).sha1).toBe('3149b6b81f766e73da452f9956b9008a5b8dd9dc');
    expect(compileScript('batch', [...POLICY_KINDS]).sha1).toBe(
      '0c52b3850df998ed288afda7a9a7b963a2f648f7',
    );
  });
});
