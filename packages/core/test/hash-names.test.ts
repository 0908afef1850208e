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
    expect(one('fixedWindow')).toBe('777e4cc8e4174a3e3738f8d253e82d88009789e3');
    expect(one('slidingWindow')).toBe('a6a20d7efe35c28d13555aa4a316d5c02d105ded');
    expect(one('slidingWindowLog')).toBe('ad724c69552205c8d59a8e38978bd77abd9b2edf');
    expect(one('tokenBucket')).toBe('91d7e9030717c125d4a8a25bc7c2c1572098eb39');
    expect(one('leakyBucket')).toBe('b28348460470dd5b959bb85b13017c544bb50a5e');
    expect(one('quota')).toBe('22f6a798e8671dc1bb4cb283a5fc9826de716a5f');
    // The five rate kinds together.
    expect(compileScript('one', FIVE).sha1).toBe('fd64dc7cdb58aedf3c8d43d88f169825767e5545');
    expect(compileScript('one', [...POLICY_KINDS]).sha1).toBe(
      '9da7ea082d74cbc563e53eb4cad4d00dfb542289',
    );
    expect(batch('fixedWindow')).toBe('8e78b715f1a25bc5d83ae9469139aa14894eff82');
    expect(batch('slidingWindow')).toBe('a390f22325366d84d4987440a1cf3106d25f70c9');
    expect(batch('slidingWindowLog')).toBe('ece55763e8413308993ffa29c1fc3ccbfb0bccc9');
    expect(batch('tokenBucket')).toBe('fc559718f2aaf2ea3b7f4d0dadd6d2222537c358');
    expect(batch('leakyBucket')).toBe('9bcb7cc4ee7790911ce651494b0df2d1f1707df5');
    expect(batch('quota')).toBe('05060fbea98d5b7d227b69eea4a9c5ffcf605399');
    expect(compileScript('batch', FIVE).sha1).toBe('a6e8857f398b92ff61ed7a62e37609d069869876');
    expect(compileScript('batch', [...POLICY_KINDS]).sha1).toBe(
      '89f998e9ea03211fa7e2c7466c75061d0601f7a8',
    );
  });
});
