// Key names and script SHA-1s are persisted state: a Redis holding `api:{user}:tb:jl0f9` keeps
// counting under that name across upgrades, and EVALSHA finds a script by its SHA-1. The ids
// changed once, on purpose, when they stopped hashing limits (a new limit keeps its count; the
// changeset says what that means for an upgrade); they are checked against node:crypto, and must
// not change again.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sha1Hex, sha256Base64url, utf8Length } from '../src/hash.js';
import {
  fixedWindow,
  leakyBucket,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import { encodeIdentity } from '../src/keys.js';
import { POLICY_KINDS } from '../src/policies/kinds.js';
import { compileScript } from '../src/redis/lua.js';

describe('key names', () => {
  it('policy ids are those computed with node:crypto', () => {
    expect(tokenBucket({ limit: 100, interval: '1m' }).id).toBe('tb:jl0f9');
    expect(fixedWindow({ limit: 10, window: '1s' }).id).toBe('fw:tQYS-');
    expect(slidingWindow({ limit: 5, window: '10s' }).id).toBe('sw:s1ghV');
    expect(slidingWindowLog({ limit: 3, window: '1m' }).id).toBe('swl:_EalJ');
    expect(leakyBucket({ limit: 10, interval: '1s', queue: 5 }).id).toBe('lb:ol-xg');
    expect(quota({ limit: 1000, per: 'day' }).id).toBe('qt:oxnvB');
    expect(tokenBucket({ limit: 100, interval: '1m', name: 'api' }).id).toBe('tb:tMuN1');
    // What is hashed, spelled out: the kind, the window, a quota's period and zone, the name given.
    const id = (what: unknown[], tag: string) =>
      `${tag}:${createHash('sha256').update(JSON.stringify(what)).digest('base64url').slice(0, 5)}`;
    expect(tokenBucket({ limit: 7, interval: '1m', burst: 3 }).id).toBe(
      id(['tokenBucket', 60_000, null, null, null], 'tb'),
    );
    expect(quota({ limit: 5, per: 'week', timeZone: 'Europe/Berlin', name: 'w' }).id).toBe(
      id(['quota', 604_800_000, 'week', 'Europe/Berlin', 'w'], 'qt'),
    );
  });

  it('neither the limit, burst, queue, blockFor nor shadow enters the policy id', () => {
    expect(tokenBucket({ limit: 100, interval: '1m', blockFor: '1h' }).id).toBe('tb:jl0f9');
    expect(tokenBucket({ limit: 5, interval: '1m', burst: 50, shadow: true }).id).toBe('tb:jl0f9');
    expect(fixedWindow({ limit: 99, window: '1s', blockFor: 500 }).id).toBe('fw:tQYS-');
    expect(leakyBucket({ limit: 1, interval: '1s', queue: 99 }).id).toBe('lb:ol-xg');
    expect(quota({ limit: 7, per: 'day', timeZone: 'UTC' }).id).toBe('qt:oxnvB');
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

  // These change only when the Lua does; update them with it (1.1: the token bucket's fill time).
  const FIVE = POLICY_KINDS.filter((k) => k !== 'quota');
  it("today's scripts keep today's SHA-1s", () => {
    const one = (k: (typeof POLICY_KINDS)[number]) => compileScript('one', [k]).sha1;
    const batch = (k: (typeof POLICY_KINDS)[number]) => compileScript('batch', [k]).sha1;
    expect(one('fixedWindow')).toBe('7df0dab04d404c2ff4b8ba2dd586ab61f009002e');
    expect(one('slidingWindow')).toBe('7b2729ca6e3e2bc5cc9beb58a5a7937fb74091c7');
    expect(one('slidingWindowLog')).toBe('e7766f23a0a511e0bd12ca7df211490165010e5b');
    expect(one('tokenBucket')).toBe('dadb4e709a51268d2ba9cf3a1db3ce0da754d1cb');
    expect(one('leakyBucket')).toBe('88572e765173bf637299978378bc450efed9c65a');
    expect(one('quota')).toBe('2d11b5a22ca5feac49e1d8d969af97ff7801c75e');
    // The five rate kinds together.
    expect(compileScript('one', FIVE).sha1).toBe('d5c0183a1ec450fef41e80f3d9d564d0273c9cb0');
    expect(compileScript('one', [...POLICY_KINDS]).sha1).toBe(
      '7490d6a30d9b986ca626e8f7730a3ce2aeaf51f2',
    );
    expect(batch('fixedWindow')).toBe('466df12f2c8c49d4c6cce548f5d8ded4c69e324e');
    expect(batch('slidingWindow')).toBe('abfc93c1eb95521390c1ac3f90ef2aabd3077f55');
    expect(batch('slidingWindowLog')).toBe('34a43027e560ce68d4ae7f6cae0507dde7dfb9f4');
    expect(batch('tokenBucket')).toBe('a84f76891dbf0f060c89fb0b020634adf315b846');
    expect(batch('leakyBucket')).toBe('378721e956f4408b2addf12c8a3fb9c79ded1650');
    expect(batch('quota')).toBe('97f808df58ba42031dbc1e4406fcdc9c057d697e');
    expect(compileScript('batch', FIVE).sha1).toBe('ed69548dc9ad5fda3d326e68cbdafb42fb762cea');
    expect(compileScript('batch', [...POLICY_KINDS]).sha1).toBe(
      '8f1aead24ae81996f2c40f421f4b5c7559b73713',
    );
  });
});
