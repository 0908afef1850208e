// migrateKeys: '0.1' in the reference (policies/migrate.ts, compose.ts evaluateAll). The Lua
// against it, and a 0.1 process beside a 1.0 one on one Redis: packages/ioredis/test/migrate-keys.test.ts.
import { describe, expect, it } from 'vitest';
import {
  createLimiter,
  fixedWindow,
  leakyBucket,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import { callKeys } from '../src/keys.js';
import { legacyPolicyId } from '../src/policies/migrate.js';
import { compileScript, scriptFor } from '../src/redis/lua.js';
import { evaluateAll, type StoreCall } from '../src/store.js';
import { MapStore } from './map-store.js';

describe('legacyPolicyId', () => {
  // The ids 0.1 (5f707f4) gave these policies: its own policyId, run on its own factories.
  it('is the id 0.1 gave the policy', () => {
    expect(legacyPolicyId(fixedWindow({ limit: 100, window: '1m' }))).toBe('fw:NiKzO');
    expect(legacyPolicyId(fixedWindow({ limit: 7, window: '1s', name: 'x', blockFor: '1m' }))).toBe(
      'fw:8fM-E',
    );
    expect(legacyPolicyId(slidingWindow({ limit: 100, window: '1h' }))).toBe('sw:ArqPV');
    expect(legacyPolicyId(slidingWindowLog({ limit: 50, window: '10s' }))).toBe('swl:96kKt');
    expect(legacyPolicyId(tokenBucket({ limit: 7, interval: '1m', burst: 3 }))).toBe('tb:53Kwb');
    expect(legacyPolicyId(tokenBucket({ limit: 100, interval: '1s' }))).toBe('tb:4NUGZ');
    expect(legacyPolicyId(leakyBucket({ limit: 5, interval: '1s', queue: 2 }))).toBe('lb:KDJMg');
    expect(legacyPolicyId(quota({ limit: 1000, per: 'month', timeZone: 'Europe/Paris' }))).toBe(
      'qt:UxYCB',
    );
    expect(legacyPolicyId(quota({ limit: 1000, per: 'day' }))).toBe('qt:xxz2G');
  });
});

describe('migrate calls', () => {
  it('carry the 0.1 keys after the others: policies, blocks, overrides, 0.1 keys, 0.1 blocks', () => {
    const a = tokenBucket({ limit: 5, interval: '1s' });
    const b = fixedWindow({ limit: 5, window: '1m', blockFor: '1m' });
    const keys = callKeys('p', 'u', [a, b], true, [a, b].map(legacyPolicyId));
    const [la, lb] = [legacyPolicyId(a), legacyPolicyId(b)];
    expect(keys).toEqual([
      `p:{u}:${a.id}`,
      `p:{u}:${b.id}`,
      `p:{u}:${b.id}:blk`,
      `p:{u}:${a.id}:ovr`,
      `p:{u}:${b.id}:ovr`,
      `p:{u}:${la}`,
      `p:{u}:${lb}`,
      `p:{u}:${lb}:blk`,
    ]);
  });

  it('decide on the stricter state and write it to both keys', () => {
    const p = fixedWindow({ limit: 5, window: '1m', blockFor: '1m' });
    const keys = callKeys('p', 'u', [p], false, [legacyPolicyId(p)]);
    const call: StoreCall = { keys, policies: [p], cost: 1, mode: 'limit', migrate: '0.1' };
    const now = 120_000;
    // 1.0 counted 1 in this window, 0.1 counted 3: 3 + 1 now.
    const { results, writes } = evaluateAll(call, [[120_000, 1], undefined, [120_000, 3]], now);
    expect(results[0]).toMatchObject({ allowed: true, remaining: 1 });
    expect(writes[0]).toEqual({ state: [120_000, 4], ttlMs: 60_000 });
    expect(writes[2]).toEqual({ state: [120_000, 4], ttlMs: 60_000 });
    // A block a 0.1 process set, later than 1.0's: denied, and folded onto the 1.0 block key.
    const blocked = evaluateAll(call, [undefined, [now + 10], [120_000, 1], [now + 500]], now);
    expect(blocked.results[0]).toMatchObject({ allowed: false, retryAfterMs: 500 });
    expect(blocked.writes[1]).toEqual({ state: [now + 500], ttlMs: 500 });
  });

  it('fold a stricter 0.1 state onto the 1.0 key even when denied or peeked', () => {
    const p = slidingWindow({ limit: 3, window: '1m' });
    const keys = callKeys('p', 'u', [p], false, [legacyPolicyId(p)]);
    for (const mode of ['limit', 'peek'] as const) {
      const call: StoreCall = { keys, policies: [p], cost: 1, mode, migrate: '0.1' };
      // Aligned by window: 1.0's previous window 1, 0.1's (older by a window) current 3.
      const { results, writes } = evaluateAll(
        call,
        [
          [120_000, 0, 1],
          [60_000, 3, 0],
        ],
        120_000,
      );
      expect(results[0]!.allowed).toBe(false);
      expect(writes[0]).toEqual({ state: [120_000, 0, 3], ttlMs: 60_000 });
      expect(writes[1]).toBeUndefined();
    }
  });

  it('without the option: the keys and the script are those of 1.0', () => {
    const ps = [tokenBucket({ limit: 5, interval: '1s' })];
    expect(callKeys('p', 'u', ps)).toEqual([`p:{u}:${ps[0]!.id}`]);
    expect(scriptFor(ps).source).not.toContain('PTTL');
    expect(scriptFor(ps, false, '0.1').source).toContain('PTTL');
  });

  it('createLimiter takes migrateKeys: "0.1" or false, nothing else', async () => {
    const store = new MapStore(() => 1_000);
    const policy = fixedWindow({ limit: 1, window: '1s' });
    expect(() => createLimiter({ store, policy, migrateKeys: '0.2' as '0.1' })).toThrow(
      /migrateKeys/,
    );
    const l = createLimiter({ store, policy, migrateKeys: '0.1' });
    expect((await l.limit('u')).allowed).toBe(true);
    // Both keys written by the reference store.
    expect(store.states.get(`floodgate:{u}:${legacyPolicyId(policy)}`)).toEqual([1_000, 1]);
    expect(store.states.get(`floodgate:{u}:${policy.id}`)).toEqual([1_000, 1]);
    createLimiter({ store, policy, migrateKeys: false });
  });

  // The SHA-1s these scripts had before migrateKeys existed (42ca586), as the token bucket's fill
  // time (1.1) changed the bucket fragments: the option adds nothing to a script without it.
  it('without the option: the scripts of blocks, overrides and shadows are byte for byte those of before', () => {
    const K = [
      'fixedWindow',
      'slidingWindow',
      'slidingWindowLog',
      'tokenBucket',
      'leakyBucket',
      'quota',
    ] as const;
    const all = K.map(() => true);
    const mixed = ['tokenBucket', 'fixedWindow'] as const;
    const sha = (
      v: 'one' | 'batch',
      ...a: Parameters<typeof compileScript> extends [unknown, ...infer R] ? R : never
    ) => compileScript(v, ...a).sha1;
    expect(sha('one', [...K], all)).toBe('1c7df9374dd9d81f8d1d50ee54704617ee5c3c0f');
    expect(sha('one', [...K], all, [], true)).toBe('967fa73b4760ba1d71fd1c075268c6baabe4f2ba');
    expect(sha('one', [...mixed], [false, true], [true, false])).toBe(
      'd3c52e5d45c1b4f9b33e9d96f6739703be0dfbac',
    );
    expect(sha('one', [...mixed], [false, true], [true, false], true)).toBe(
      '423dc9ad88f87737e6d344a1451fe0327a527a2c',
    );
    expect(sha('batch', [...K], all)).toBe('7d216d7e3ad2b05cada92ed3b206689a25da8a31');
    expect(sha('batch', [...K], all, [], true)).toBe('eda4dfed707e7cb4cc1b91674eebfc4bc6560216');
    expect(sha('batch', [...mixed], [false, true], [true, false])).toBe(
      '88c76d891c806a7332a5e5cb398bb671cafa4ddb',
    );
    expect(sha('batch', [...mixed], [false, true], [true, false], true)).toBe(
      '1df0ede4d0d9965f6683a43c197707a9907938bc',
    );
  });
});
