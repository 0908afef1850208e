// Migrating keys from 0.1 (`migrateKeys: '0.1'`; docs/algorithms.md, "Migrating keys from 0.1").
// A "0.1 process" here is 0.1 itself: its limit script (test/fixtures), on the policy's 0.1 key
// (named by the hash of every parameter, `legacyPolicyId`), in 0.1's format (the limit in the
// radix). `decodeLegacy` reads that format in BigInt, independently of every script.

import { readFileSync } from 'node:fs';
import {
  createLimiter,
  fixedWindow,
  leakyBucket,
  type Policy,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { encodeScriptArgs, scriptFor } from '@floodgate/core/redis';
import {
  encodeIdentity,
  evaluateAll,
  evaluatePolicy,
  legacyPolicyId,
  type PolicyResult,
  type PolicyState,
  policyKey,
  type StoreCall,
} from '@floodgate/core/store';
import { type RedisServer, rng, startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IoRedisStore } from '../src/index.js';

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.url);
});
afterAll(async () => {
  redis?.disconnect();
  await server?.stop();
});

// The limit scripts of 0.1, one per kind, as 0.1's own assembler wrote them.
const SCRIPTS_01 = JSON.parse(
  readFileSync(new URL('./fixtures/floodgate-0.1-scripts.json', import.meta.url), 'utf8'),
) as Record<string, string>;

function decodeLegacy(p: Policy, raw: string | null): PolicyState | undefined {
  if (raw === null) return undefined;
  if (raw.includes(':')) return raw.split(':').map(Number);
  const v = BigInt(raw);
  const L1 = BigInt(p.params[0]!) + 1n;
  switch (p.kind) {
    case 'fixedWindow':
      return [Number((v / L1) * BigInt(p.windowMs)), Number(v % L1)];
    case 'quota':
      return [Number((v / L1) * 60_000n), Number(v % L1)];
    case 'slidingWindow': {
      const q = v / L1;
      return [Number((q / L1) * BigInt(p.windowMs)), Number(q % L1), Number(v % L1)];
    }
    default: {
      const pm = BigInt(p.params[2]!);
      return [Number(v / pm), Number(v % pm)];
    }
  }
}

/**
 * One decision of a 0.1 process on Redis: 0.1's own script for the policy's kind (assembled by
 * 0.1's code at 5f707f4, test/fixtures/floodgate-0.1-scripts.json) on the policy's 0.1 key, its
 * ARGV laid out as today's (mode, cost, now, deadline, params, a quota's period ends: unchanged
 * since 0.1).
 */
async function legacyDecide(
  prefix: string,
  identity: string,
  p: Policy,
  now: number,
  cost = 1,
): Promise<{ allowed: boolean }> {
  const key = policyKey(prefix, encodeIdentity(identity), legacyPolicyId(p));
  const call: StoreCall = { keys: [key], policies: [p], cost, mode: 'limit' };
  const reply = (await redis.eval(
    SCRIPTS_01[p.kind]!,
    1,
    key,
    ...encodeScriptArgs(call, now),
  )) as unknown[];
  return { allowed: reply[0] === 1 };
}

const KINDS = [
  () => fixedWindow({ limit: 5, window: '1s' }),
  () => slidingWindow({ limit: 5, window: '1s' }),
  () => slidingWindowLog({ limit: 5, window: '1s' }),
  () => tokenBucket({ limit: 5, interval: '1s' }),
  () => tokenBucket({ limit: 7, interval: '1m', burst: 3 }),
  () => leakyBucket({ limit: 5, interval: '1s', queue: 2 }),
  () => quota({ limit: 5, per: 'day', timeZone: 'UTC' }),
] as const;

/** Admissions (time, cost) never over the policy's bound: per window, per sliding window, per span. */
function overAdmitted(
  p: Policy,
  admitted: readonly (readonly [number, number])[],
): string | undefined {
  const w = p.windowMs;
  switch (p.kind) {
    case 'fixedWindow':
    case 'slidingWindow':
    case 'quota': {
      const unit = p.kind === 'quota' ? 86_400_000 : w;
      const per = new Map<number, number>();
      for (const [t, c] of admitted) {
        const k = Math.floor(t / unit);
        per.set(k, (per.get(k) ?? 0) + c);
        if (per.get(k)! > p.limit) return `window ${k}: ${per.get(k)} > ${p.limit}`;
      }
      return undefined;
    }
    case 'slidingWindowLog': {
      for (let i = 0; i < admitted.length; i++) {
        let sum = 0;
        for (let j = i; j < admitted.length && admitted[j]![0] < admitted[i]![0] + w; j++) {
          sum += admitted[j]![1];
        }
        if (sum > p.limit) return `from ${admitted[i]![0]}: ${sum} > ${p.limit}`;
      }
      return undefined;
    }
    default: {
      // GCRA: over [a, b], at most capacity + rate × (b − a) units.
      const cap = p.capacity;
      for (let i = 0; i < admitted.length; i++) {
        let sum = 0;
        for (let j = i; j < admitted.length; j++) {
          sum += admitted[j]![1];
          const span = admitted[j]![0] - admitted[i]![0];
          if (sum > cap + Math.floor((p.limit * span) / w)) {
            return `[${admitted[i]![0]}, ${admitted[j]![0]}]: ${sum} units`;
          }
        }
      }
      return undefined;
    }
  }
}

/**
 * A rolling upgrade on one Redis: a 0.1 process and a 1.0 process (with `migrateKeys` when
 * `migrate`) deciding for one identity in turn at random, then (phase 2) 1.0 alone without the
 * option. Returns every admission.
 */
async function fleet(
  make: () => Policy,
  seed: number,
  migrate: boolean,
  prefix: string,
): Promise<{ policy: Policy; admitted: [number, number][] }> {
  const random = rng(seed);
  const policy = make();
  let now = Date.UTC(2026, 11, 7, 0, 0, 0) + Math.floor(random() * 1000);
  const store = new IoRedisStore(redis, { clock: 'client', now: () => now, batch: false });
  const common = { store, policy, prefix, blockCache: false as const, timeoutMs: false as const };
  const v1 = createLimiter({ ...common, ...(migrate ? { migrateKeys: '0.1' as const } : {}) });
  const after = createLimiter(common);
  const admitted: [number, number][] = [];
  const id = `user_${seed}`;
  const step = policy.kind === 'quota' ? 3_600_000 : Math.ceil(policy.windowMs / 12);
  for (let i = 0; i < 260; i++) {
    now += Math.floor(random() * step);
    // Phase 1: 0.1 processes still run (before the first 1.0 process, only they do); then, the
    // last 0.1 process gone, 1.0 with the option decides alone for a while (each of its calls,
    // a denial included, folds the 0.1 state onto the 1.0 key); phase 2: the option removed.
    const phase2 = i >= 200;
    if (i < 160 && (i < 20 || random() < 0.5)) {
      const d = await legacyDecide(prefix, id, policy, now);
      if (d.allowed) admitted.push([now, 1]);
    } else {
      const d = await (phase2 ? after : v1).limit(id);
      if (d.allowed) admitted.push([now, 1]);
    }
  }
  return { policy, admitted };
}

describe('migrateKeys: a 0.1 process and a 1.0 process on one Redis', () => {
  for (const [k, make] of KINDS.entries()) {
    it(`${make().kind} #${k}: never more than the limit, during and after the switch`, async () => {
      for (let seed = 1; seed <= 8; seed++) {
        const { policy, admitted } = await fleet(make, seed * 100 + k, true, `mig${k}`);
        expect(overAdmitted(policy, admitted), `seed ${seed}`).toBeUndefined();
        expect(admitted.length).toBeGreaterThan(0);
      }
    });
  }

  it('without the option the same fleets over-admit (the test can see it)', async () => {
    let over = 0;
    for (const [k, make] of KINDS.entries()) {
      for (let seed = 1; seed <= 4; seed++) {
        const { policy, admitted } = await fleet(make, seed * 100 + k, false, `plain${k}`);
        if (overAdmitted(policy, admitted) !== undefined) over++;
      }
    }
    expect(over).toBeGreaterThan(10);
  });

  it('after phase 2 the counts carry from the 1.0 key: the 0.1 key is no longer needed', async () => {
    let now = Date.UTC(2026, 11, 7, 0, 0, 0);
    const store = new IoRedisStore(redis, { clock: 'client', now: () => now, batch: false });
    const policy = fixedWindow({ limit: 5, window: '1m' });
    const common = { store, policy, prefix: 'carry', blockCache: false as const };
    const migrating = createLimiter({ ...common, migrateKeys: '0.1' });
    // Two by 0.1, two by 1.0 while migrating.
    await legacyDecide('carry', 'u', policy, now);
    await legacyDecide('carry', 'u', policy, now + 1);
    now += 2;
    expect((await migrating.limit('u')).remaining).toBe(2);
    expect((await migrating.limit('u')).remaining).toBe(1);
    // The 0.1 key holds the four, in 0.1's format.
    const old = policyKey('carry', 'u', legacyPolicyId(policy));
    expect(decodeLegacy(policy, await redis.get(old))).toEqual([now - (now % 60_000), 4]);
    // Phase 2: the option removed, the 0.1 key gone (its TTL): one left in this window.
    await redis.del(old);
    const plain = createLimiter(common);
    expect((await plain.limit('u')).remaining).toBe(0);
    expect((await plain.limit('u')).allowed).toBe(false);
  });

  it('a denial folds what 0.1 charged onto the 1.0 key, so removing the option forgets nothing', async () => {
    const now = Date.UTC(2026, 11, 7, 0, 0, 0);
    const store = new IoRedisStore(redis, { clock: 'client', now: () => now, batch: false });
    for (const policy of [
      fixedWindow({ limit: 3, window: '1m' }),
      slidingWindow({ limit: 3, window: '1m' }),
      slidingWindowLog({ limit: 3, window: '1m' }),
      tokenBucket({ limit: 3, interval: '1m' }),
      quota({ limit: 3, per: 'day' }),
    ]) {
      const prefix = `fold-${policy.kind}`;
      const common = { store, policy, prefix, blockCache: false as const };
      for (let i = 0; i < 3; i++) await legacyDecide(prefix, 'u', policy, now);
      // The last 0.1 process is gone; one call with the option, denied.
      expect((await createLimiter({ ...common, migrateKeys: '0.1' }).limit('u')).allowed).toBe(
        false,
      );
      await redis.del(policyKey(prefix, 'u', legacyPolicyId(policy)));
      // Phase 2: the 1.0 key alone says the identity is spent.
      const d = await createLimiter(common).limit('u');
      expect(d.allowed, policy.kind).toBe(false);
    }
  });

  it('blocks: read from both keys (the later until), set on both', async () => {
    let now = Date.UTC(2026, 11, 7, 0, 0, 0);
    const store = new IoRedisStore(redis, { clock: 'client', now: () => now, batch: false });
    const policy = fixedWindow({ limit: 1, window: '1s', blockFor: '1m' });
    const common = { store, policy, prefix: 'blk', blockCache: false as const };
    const migrating = createLimiter({ ...common, migrateKeys: '0.1' });
    const oldBlock = `${policyKey('blk', 'u', legacyPolicyId(policy))}:blk`;
    const newBlock = `${policyKey('blk', 'u', policy.id)}:blk`;
    // A block a 0.1 process set.
    await redis.set(oldBlock, String(now + 30_000), 'PX', 30_000);
    const d = await migrating.limit('u');
    expect(d.allowed).toBe(false);
    expect(d.retryAfterMs).toBe(30_000);
    // After it, a denial blocks on both keys.
    now += 30_001;
    await redis.del(oldBlock);
    expect((await migrating.limit('u')).allowed).toBe(true);
    expect((await migrating.limit('u')).allowed).toBe(false);
    expect(await redis.get(oldBlock)).toBe(String(now + 60_000));
    expect(await redis.get(newBlock)).toBe(String(now + 60_000));
    // A reset lifts both, and clears both counts.
    await migrating.reset('u');
    expect(await redis.exists(oldBlock, newBlock)).toBe(0);
    expect(await redis.exists(policyKey('blk', 'u', legacyPolicyId(policy)))).toBe(0);
  });

  it('refunds act on both keys', async () => {
    const now = Date.UTC(2026, 11, 7, 0, 0, 0);
    const store = new IoRedisStore(redis, { clock: 'client', now: () => now, batch: false });
    for (const policy of [
      fixedWindow({ limit: 5, window: '1m' }),
      tokenBucket({ limit: 5, interval: '1m' }),
      slidingWindowLog({ limit: 5, window: '1m' }),
    ]) {
      const prefix = `ref-${policy.kind}`;
      const migrating = createLimiter({ store, policy, prefix, migrateKeys: '0.1' });
      await legacyDecide(prefix, 'u', policy, now, 3);
      expect((await migrating.limit('u')).remaining).toBe(1);
      await migrating.refund('u', { cost: 2 });
      // A 0.1 process sees the refund: 2 used of 5, so 3 more pass and the fourth does not.
      for (let i = 0; i < 3; i++) {
        expect((await legacyDecide(prefix, 'u', policy, now)).allowed, policy.kind).toBe(true);
      }
      expect((await legacyDecide(prefix, 'u', policy, now)).allowed, policy.kind).toBe(false);
    }
  });
});

describe('migrateKeys: the Lua against the reference (evaluateAll), on random traces', () => {
  const POLICIES: (() => Policy[])[] = [
    () => [fixedWindow({ limit: 7, window: '1m' })],
    () => [slidingWindow({ limit: 7, window: '1m', blockFor: '30s' })],
    () => [slidingWindowLog({ limit: 7, window: '1m' })],
    () => [
      tokenBucket({ limit: 7, interval: '1m', burst: 4 }),
      fixedWindow({ limit: 9, window: '2m' }),
    ],
    () => [leakyBucket({ limit: 3, interval: '1m', queue: 3, blockFor: '10s' })],
    () => [
      quota({ limit: 20, per: 'day', timeZone: 'Europe/Paris' }),
      tokenBucket({ limit: 3, interval: '7s' }),
    ],
    () => [
      tokenBucket({ limit: 7, interval: '1m' }),
      slidingWindowLog({ limit: 4, window: '30s' }),
      slidingWindow({ limit: 5, window: '20s' }),
    ],
    // A shadowed policy beside enforced ones: charged apart, mirrored as well.
    () => [
      tokenBucket({ limit: 4, interval: '1m', shadow: true }),
      fixedWindow({ limit: 6, window: '1m', blockFor: '20s' }),
    ],
  ];

  for (const [n, make] of POLICIES.entries()) {
    it(`policies #${n}: every decision as the reference's, 0.1 decisions interleaved`, async () => {
      const random = rng(9000 + n);
      const policies = make();
      const prefix = `diff${n}`;
      const id = 'ident';
      let now = Date.UTC(2026, 11, 7, 0, 0, 0) + Math.floor(random() * 60_000);
      const store = new IoRedisStore(redis, { clock: 'client', now: () => now, batch: false });
      // The call's keys as the limiter builds them (keys.ts callKeys): the policies', the block
      // keys, then the 0.1 keys and the 0.1 block keys.
      const keys = policies.map((p) => policyKey(prefix, id, p.id));
      const old = policies.map((p) => policyKey(prefix, id, legacyPolicyId(p)));
      for (const [i, p] of policies.entries())
        if (p.blockForMs !== undefined) keys.push(`${keys[i]}:blk`);
      keys.push(...old);
      for (const [i, p] of policies.entries())
        if (p.blockForMs !== undefined) keys.push(`${old[i]}:blk`);
      const model = new Map<string, PolicyState>();
      for (let step = 0; step < 300; step++) {
        now += Math.floor(random() * random() * 40_000);
        if (random() < 0.3) {
          // A 0.1 process charges one policy on its 0.1 key (Redis and the model alike).
          const i = Math.floor(random() * policies.length);
          const p = policies[i]!;
          const oldKey = policyKey(prefix, id, legacyPolicyId(p));
          const ref = evaluatePolicy(p, model.get(oldKey), now, 1);
          const d = await legacyDecide(prefix, id, p, now);
          expect(d.allowed, `step ${step} 0.1`).toBe(ref.allowed);
          if (ref.allowed) model.set(oldKey, ref.next!);
        } else {
          const r = random();
          const mode: StoreCall['mode'] = r < 0.7 ? 'limit' : r < 0.85 ? 'peek' : 'refund';
          const cost = mode === 'peek' ? 1 : 1 + Math.floor(random() * 2);
          const call: StoreCall = {
            keys,
            policies,
            cost,
            mode,
            migrate: '0.1',
            identity: id,
            prefix,
          };
          const ref = evaluateAll(
            call,
            keys.map((k) => model.get(k)),
            now,
          );
          const got = await store.evaluate(call);
          expect(strip(got), `step ${step} ${mode}`).toEqual(strip(ref.results));
          ref.writes.forEach((w, i) => {
            if (w === null) model.delete(keys[i]!);
            else if (w !== undefined) model.set(keys[i]!, w.state);
          });
        }
        // Real time must not expire what the fake clock still counts.
        const m = redis.multi();
        for (const k of keys) m.pexpire(k, 3_600_000_000);
        await m.exec();
      }
    });
  }
});

function strip(rs: readonly PolicyResult[]) {
  return rs.map(({ allowed, remaining, resetAfterMs, retryAfterMs, delayMs }) => ({
    allowed,
    remaining,
    resetAfterMs,
    retryAfterMs,
    delayMs,
  }));
}

describe('migrateKeys off: the scripts and calls are those of 1.0', () => {
  it('a limiter without the option runs the very script, with its keys', () => {
    const policies = [
      tokenBucket({ limit: 5, interval: '1s' }),
      fixedWindow({ limit: 9, window: '1m', blockFor: '1m' }),
    ];
    const plain = scriptFor(policies);
    const migrating = scriptFor(policies, false, '0.1');
    expect(plain.sha1).not.toBe(migrating.sha1);
    expect(plain.source).not.toContain('PTTL');
    expect(migrating.source.split('\n')[0]).toBe(
      '-- Floodgate limit script: tokenBucket + fixedWindow (blockFor), migrating keys from 0.1',
    );
    // Policies' keys, the block key, then the two 0.1 keys and the 0.1 block key.
    expect(migrating.source).toContain("redis.call('GET', KEYS[4])");
    expect(migrating.source).toContain("redis.call('GET', KEYS[6])");
  });

  it('the largest scripts (8 and 16 policies, every kind, blocks, overrides, shadow) load', async () => {
    const makers = [
      (i: number) => fixedWindow({ limit: 5, window: 1000 + i, blockFor: '1m' }),
      (i: number) => slidingWindow({ limit: 5, window: 1000 + i }),
      (i: number) => slidingWindowLog({ limit: 5, window: 1000 + i, blockFor: '1s' }),
      (i: number) => tokenBucket({ limit: 5, interval: 1000 + i, shadow: i % 2 === 0 }),
      (i: number) => leakyBucket({ limit: 5, interval: 1000 + i, queue: 2 }),
      (i: number) => quota({ limit: 5, per: 'day', name: `q${i}` }),
    ];
    // 8: the most policies whose script reads its globals through locals (assemble.ts); 16.
    for (const count of [8, 16]) {
      const policies = Array.from({ length: count }, (_, i) => makers[i % makers.length]!(i));
      for (const overrides of [false, true]) {
        // With per-policy costs too (their own variant: one more local, two per policy's block).
        for (const costs of [false, true]) {
          const { source, sha1 } = scriptFor(policies, overrides, '0.1', costs);
          expect(source.includes('local KEYS, ARGV, redis, tonumber')).toBe(count === 8);
          expect(await redis.script('LOAD', source)).toBe(sha1);
        }
      }
    }
  });

  it("with overrides: every decision as the reference's, overrides set at random", async () => {
    const random = rng(777);
    const policies = [
      tokenBucket({ limit: 7, interval: '1m' }),
      fixedWindow({ limit: 6, window: '1m', blockFor: '20s' }),
    ];
    const relimit = (i: number, limit: number): Policy =>
      i === 0
        ? tokenBucket({ limit, interval: '1m' })
        : fixedWindow({ limit, window: '1m', blockFor: '20s' });
    const prefix = 'diff-ovr';
    const id = 'ident';
    let now = Date.UTC(2026, 11, 7, 0, 0, 0) + 123;
    const store = new IoRedisStore(redis, { clock: 'client', now: () => now, batch: false });
    const own = policies.map((p) => policyKey(prefix, id, p.id));
    const old = policies.map((p) => policyKey(prefix, id, legacyPolicyId(p)));
    const keys = [...own, `${own[1]}:blk`, ...own.map((k) => `${k}:ovr`), ...old, `${old[1]}:blk`];
    const model = new Map<string, PolicyState>();
    for (let step = 0; step < 300; step++) {
      now += Math.floor(random() * random() * 30_000);
      const r = random();
      if (r < 0.1) {
        // An override of one policy: another limit (0 blocks) until some time ahead.
        const i = Math.floor(random() * 2);
        const limit = [0, 1, 3, 20, 50][Math.floor(random() * 5)]!;
        const params = (limit === 0 ? policies[i]! : relimit(i, limit)).params;
        const state = [
          now + Math.floor(random() * 120_000),
          limit,
          ...(params.slice(0, i === 0 ? 3 : 2) as number[]),
        ];
        model.set(`${own[i]}:ovr`, state);
        await redis.set(`${own[i]}:ovr`, state.join(' '));
      } else if (r < 0.35) {
        const i = Math.floor(random() * 2);
        const p = policies[i]!;
        const ref = evaluatePolicy(p, model.get(old[i]!), now, 1);
        const d = await legacyDecide(prefix, id, p, now);
        expect(d.allowed, `step ${step} 0.1`).toBe(ref.allowed);
        if (ref.allowed) model.set(old[i]!, ref.next!);
      } else {
        const mode: StoreCall['mode'] = random() < 0.85 ? 'limit' : 'refund';
        const call: StoreCall = {
          keys,
          policies,
          cost: 1,
          mode,
          overrides: true,
          migrate: '0.1',
          identity: id,
          prefix,
        };
        const ref = evaluateAll(
          call,
          keys.map((k) => model.get(k)),
          now,
        );
        const got = await store.evaluate(call);
        expect(strip(got), `step ${step} ${mode}`).toEqual(strip(ref.results));
        ref.writes.forEach((w, i) => {
          if (w === null) model.delete(keys[i]!);
          else if (w !== undefined) model.set(keys[i]!, w.state);
        });
      }
      const m = redis.multi();
      for (const k of keys) m.pexpire(k, 3_600_000_000);
      await m.exec();
    }
  });
});
