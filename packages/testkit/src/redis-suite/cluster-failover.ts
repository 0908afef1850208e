import { createLimiter, fixedWindow } from '@floodgate/core';
import type { RedisStoreOptions } from '@floodgate/core/redis';
import type { RedisCluster } from '../redis-cluster.js';
import { keysFor } from '../redis-inspect.js';
import { redisCommands } from '../resp.js';
import { killMasterOf, rejoin } from './cluster-ops.js';
import { sleep, tagOf } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

const LIMIT = 40;
const IDENTITIES = 16;

/**
 * What one failover under traffic cost.
 * @example
 * ```ts
 * import type { FailoverMeasurement } from '@floodgate/testkit/redis';
 *
 * declare const m: FailoverMeasurement; // from measureFailover
 * console.log(`${m.overAdmitted} admitted beyond the limit, failover in ${Math.round(m.failoverMs)} ms`);
 * console.log(`${m.fellBack} decisions to onStoreError, ${m.afterRejoin} by Redis after the rejoin`);
 * ```
 * @beta
 */
export interface FailoverMeasurement {
  /** Admissions beyond the limit, summed over the identities on the killed master. */
  overAdmitted: number;
  /** Admissions per identity (each limited to `LIMIT` per hour). */
  admitted: number[];
  /** Decisions that fell to `onStoreError` (`'deny'`) while the master was gone. */
  fellBack: number;
  /** Per identity, whether Redis denied it after the killed node rejoined (it was at its limit). */
  deniedAfterRejoin: boolean[];
  /** Decisions that came from Redis after the killed node rejoined. */
  afterRejoin: number;
  /** From SIGKILL until another node served the identities. */
  failoverMs: number;
}

/** `count` identities whose keys live on the master serving `probe`'s key. */
async function identitiesOn(
  cluster: RedisCluster,
  prefix: string,
  count: number,
): Promise<string[]> {
  const policy = fixedWindow({ limit: LIMIT, window: '1h' });
  const keyOf = (id: string) => keysFor(prefix, id, [policy])[0]!;
  const victim = await cluster.masterOf(keyOf('id-0'));
  const candidates = Array.from({ length: count * 6 }, (_, i) => `id-${i}`);
  const port = cluster.startupNodes[0]!.port;
  const slots = await redisCommands(
    port,
    candidates.map((id) => ['CLUSTER', 'KEYSLOT', keyOf(id)]),
  );
  const [shards] = await redisCommands(victim.port, [['CLUSTER', 'SLOTS']]);
  const owned = (slot: number) =>
    (shards as unknown[][]).some(
      (s) => Number(s[0]) <= slot && slot <= Number(s[1]) && (s[2] as unknown[])[1] === victim.port,
    );
  const out = candidates.filter((_, i) => owned(Number(slots[i])));
  if (out.length < count) throw new Error('not enough identities on one master');
  return out.slice(0, count);
}

/**
 * Steady traffic for identities on one master (one decision in flight per identity, each
 * limited to LIMIT an hour); the master is SIGKILLed mid-way, its replica takes over, the killed
 * node is restarted and rejoins as a replica; traffic runs on until Redis denies every identity
 * again (at most 15 s). Decisions
 * Redis cannot make are denied (`onStoreError: 'deny'`), so every admission counted is one Redis
 * acknowledged; admissions beyond the limit are writes the old master acknowledged and its
 * replica never received.
 * @example
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { measureFailover, type RedisStoreAdapter, startRedisCluster } from '@floodgate/testkit/redis';
 *
 * declare const IOREDIS: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts
 * const cluster = await startRedisCluster();
 * // Strict mode, the replica 300 ms behind when its master dies: nothing beyond the limit.
 * const strict = { replicas: { count: 1, timeoutMs: 200 } };
 * const m = await measureFailover(cluster, IOREDIS, strict, 'failover-strict', 300);
 * await cluster.stop();
 * ```
 * @beta
 */
export async function measureFailover<C>(
  cluster: RedisCluster,
  adapter: RedisStoreAdapter<C>,
  storeOptions: RedisStoreOptions,
  prefix: string,
  replicaLagMs = 0,
): Promise<FailoverMeasurement> {
  const client = adapter.createCluster!(cluster.startupNodes, { autoPipelining: true });
  await adapter.connect(client);
  try {
    const limiter = createLimiter({
      store: adapter.makeStore(client, storeOptions),
      policy: fixedWindow({ limit: LIMIT, window: '1h' }),
      prefix,
      onStoreError: 'deny',
      blockCache: false,
      timeoutMs: 1000,
    });
    const ids = await identitiesOn(cluster, prefix, IDENTITIES);
    const admitted = ids.map(() => 0);
    let fellBack = 0;
    let afterRejoin = 0;
    const deniedAfter = ids.map(() => false);
    let phase: 'before' | 'during' | 'after' | 'stop' = 'before';
    let decided = 0;
    const traffic = ids.map(async (id, i) => {
      while (phase !== 'stop') {
        const d = await limiter.limit(id);
        decided++;
        if (d.reason !== undefined) fellBack++;
        else {
          if (d.allowed) admitted[i]!++;
          if (phase === 'after') {
            afterRejoin++;
            if (!d.allowed) deniedAfter[i] = true;
          }
        }
        // Steady, not flat out: about 100 decisions/s per identity.
        await sleep(10);
      }
    });
    // Kill once the identities are about half-way to their limit.
    while (decided < (IDENTITIES * LIMIT) / 2) await sleep(5);
    phase = 'during';
    const key = keysFor(prefix, ids[0]!, limiter.policies)[0]!;
    const { victim, failoverMs } = await killMasterOf(cluster, key, { replicaLagMs });
    await rejoin(cluster, victim);
    phase = 'after';
    // On until Redis itself denies every identity again (each is back at its limit there).
    const until = Date.now() + 15_000;
    while (deniedAfter.some((x) => !x) && Date.now() < until) await sleep(20);
    phase = 'stop';
    await Promise.all(traffic);
    const overAdmitted = admitted.reduce((sum, n) => sum + Math.max(0, n - LIMIT), 0);
    return {
      overAdmitted,
      admitted,
      fellBack,
      afterRejoin,
      deniedAfterRejoin: deniedAfter,
      failoverMs,
    };
  } finally {
    await adapter.disconnect(client);
  }
}

/** Sequential decision latency in ms (p50, p99) with the given store options. */
async function latency<C>(
  cluster: RedisCluster,
  adapter: RedisStoreAdapter<C>,
  storeOptions: RedisStoreOptions,
  prefix: string,
): Promise<{ p50: number; p99: number; ok: number }> {
  const client = adapter.createCluster!(cluster.startupNodes);
  await adapter.connect(client);
  try {
    const limiter = createLimiter({
      store: adapter.makeStore(client, storeOptions),
      policy: fixedWindow({ limit: 1_000_000, window: '1h' }),
      prefix,
      onStoreError: 'throw',
    });
    const times: number[] = [];
    let ok = 0;
    for (let i = 0; i < 300; i++) {
      const t = performance.now();
      if ((await limiter.limit(`lat-${i % 30}`)).allowed) ok++;
      times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    return { p50: times[150]!, p99: times[296]!, ok };
  } finally {
    await adapter.disconnect(client);
  }
}

/**
 * Registers the failover measurements for `adapter`: default mode (the number is reported, not
 * asserted: it is whatever the replication lag lost) and strict mode (`replicas: { count: 1 }`:
 * zero admissions beyond the limit), plus the latency strict mode adds (reported).
 */
export function registerFailover<C>(
  api: RedisSuiteApi,
  cluster: () => RedisCluster,
  adapter: RedisStoreAdapter<C>,
): void {
  const { it, expect } = api;
  const tag = tagOf(adapter);
  const report = (mode: string, m: FailoverMeasurement) =>
    console.log(
      `[failover] ${adapter.name}, ${mode}: ${m.overAdmitted} admitted beyond the limit ` +
        `(${IDENTITIES} identities × ${LIMIT}), failover ${Math.round(m.failoverMs)} ms, ` +
        `${m.fellBack} decisions to onStoreError`,
    );

  // Redis decided again after the failover, and every identity reached its limit there: Redis
  // itself denied it. (Not "LIMIT admissions seen": a call that fell back may still have been
  // charged unseen, its reply lost with the killed master or come after its timeout.)
  const reachedLimit = (m: FailoverMeasurement) => m.deniedAfterRejoin.every(Boolean);

  it('default mode: a SIGKILLed master with its replica in sync, measured', async () => {
    const m = await measureFailover(cluster(), adapter, {}, `fo-${tag}`);
    report('default mode, replica in sync', m);
    expect(m.afterRejoin).toBeGreaterThan(0);
    expect(reachedLimit(m), `admitted ${m.admitted}`).toBe(true);
  });

  it('default mode: a SIGKILLed master whose replica lagged 300 ms, measured', async () => {
    const m = await measureFailover(cluster(), adapter, {}, `fl-${tag}`, 300);
    report('default mode, replica 300 ms behind', m);
    expect(m.afterRejoin).toBeGreaterThan(0);
    expect(reachedLimit(m), `admitted ${m.admitted}`).toBe(true);
  });

  it('strict mode (replicas: 1): a SIGKILLed master whose replica lagged 300 ms admits nothing beyond the limit', async () => {
    const options = { replicas: { count: 1, timeoutMs: 200 } };
    const m = await measureFailover(cluster(), adapter, options, `fs-${tag}`, 300);
    report('strict mode, replica 300 ms behind', m);
    expect(m.overAdmitted).toBe(0);
    expect(m.admitted.every((n) => n <= LIMIT)).toBe(true);
    expect(m.afterRejoin).toBeGreaterThan(0);
    const plain = await latency(cluster(), adapter, {}, `lp-${tag}`);
    const strict = await latency(cluster(), adapter, options, `ls-${tag}`);
    expect([plain.ok, strict.ok]).toEqual([300, 300]);
    const f = (x: number) => x.toFixed(2);
    console.log(
      `[latency] ${adapter.name}: default p50 ${f(plain.p50)} ms p99 ${f(plain.p99)} ms; ` +
        `strict (WAIT 1) p50 ${f(strict.p50)} ms p99 ${f(strict.p99)} ms`,
    );
  });
}

/**
 * Registers strict mode's own checks for `adapter` (no failover): option validation, exact
 * decisions with `replicas: 1`, and an admission that too few replicas confirm failing with its
 * charge kept on the master.
 */
export function registerStrict<C>(
  api: RedisSuiteApi,
  cluster: () => RedisCluster,
  adapter: RedisStoreAdapter<C>,
): void {
  const { it, expect } = api;
  const tag = tagOf(adapter);
  it('strict mode: exact on every master; an admission too few replicas confirm fails, its charge stays', async () => {
    const c = cluster();
    const client = adapter.createCluster!(c.startupNodes);
    await adapter.connect(client);
    try {
      for (const bad of [
        { count: 0, timeoutMs: 10 },
        { count: 1, timeoutMs: 0 },
        { count: 1 },
        1,
      ]) {
        expect(() => adapter.makeStore(client, { replicas: bad as never })).toThrow(/replicas/);
      }
      const policy = fixedWindow({ limit: 2, window: '1h' });
      // replicas: 1 on identities spread over the three masters: exact, like the default mode.
      const exact = createLimiter({
        store: adapter.makeStore(client, { replicas: { count: 1, timeoutMs: 1000 } }),
        policy,
        prefix: `sk-${tag}`,
        onStoreError: 'throw',
        blockCache: false,
      });
      for (const id of ['a', 'b', 'c', 'd', 'e', 'f']) {
        const ds = [await exact.limit(id), await exact.limit(id), await exact.limit(id)];
        expect(ds.map((d) => d.allowed)).toEqual([true, true, false]);
      }
      // Each master has one replica: asking for two can never be met.
      const store = adapter.makeStore(client, { replicas: { count: 2, timeoutMs: 50 } });
      const call = { keys: keysFor(`sx-${tag}`, 'a', [policy]), policies: [policy], cost: 1 };
      await expect(store.evaluate({ ...call, mode: 'limit' })).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
      });
      // The master kept that charge: one left, not two (over-counted, never over-admitted).
      expect((await store.evaluate({ ...call, mode: 'peek' }))[0]!.remaining).toBe(1);
      const limiter = createLimiter({ store, policy, prefix: `sx-${tag}`, onStoreError: 'deny' });
      expect((await limiter.limit('a')).reason).toBe('store-unavailable');
      // Both charges are on the master: the next decision is a plain Redis denial, no WAIT.
      const d = await limiter.limit('a');
      expect([d.allowed, d.reason]).toEqual([false, undefined]);
    } finally {
      await adapter.disconnect(client);
    }
  });
}
