import {
  createLimiter,
  type Decision,
  fixedWindow,
  quota,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import { isLeaseStore } from '@floodgate/core/store';
import { registerControls } from '../conformance/controls.js';
import { registerCosts } from '../conformance/costs.js';
import { registerLimitChanges } from '../conformance/differential.js';
import { makeHarness } from '../conformance/harness.js';
import { registerReservations } from '../conformance/reservations.js';
import { type RedisCluster, startRedisCluster } from '../redis-cluster.js';
import { commandCalls, keysFor } from '../redis-inspect.js';
import { redisCommand } from '../resp.js';
import {
  registerClusterOverrideConformance,
  registerClusterOverrideTests,
} from './cluster-overrides.js';
import { sleep, tagOf } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

/**
 * The adapters `redisClusterTests` runs, each able to build a cluster client.
 * @example
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisClusterTestsOptions, type RedisStoreAdapter, redisClusterTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const IOREDIS: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts, with createCluster
 * const options: RedisClusterTestsOptions<IoRedisClient> = { adapters: [IOREDIS] };
 * redisClusterTests({ describe, it, expect, beforeAll, afterAll }, options);
 * ```
 * @public
 */
export interface RedisClusterTestsOptions<C> {
  /** Adapters with `createCluster`, one `describe` each; the failover test uses the first. */
  adapters: readonly RedisStoreAdapter<C>[];
}

const policies = [
  tokenBucket({ limit: 6, interval: '1h' }),
  slidingWindowLog({ limit: 4, window: '1h' }),
  fixedWindow({ limit: 5, window: '1d' }),
  quota({ limit: 5, per: 'month', timeZone: 'Europe/Berlin' }),
];

/**
 * A Redis store on a throw-away Redis Cluster (3 masters, 3 replicas): each multi-policy
 * decision is one script on the master owning the identity; a failover is survived.
 * @example
 * A store package's whole `test/cluster.test.ts`:
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisStoreAdapter, redisClusterTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const IOREDIS: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts, with createCluster
 * redisClusterTests({ describe, it, expect, beforeAll, afterAll }, { adapters: [IOREDIS] });
 * ```
 * @public
 */
export function redisClusterTests<C>(
  api: RedisSuiteApi,
  options: RedisClusterTestsOptions<C>,
): void {
  const { describe, it, expect, beforeAll, afterAll } = api;
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  async function openCluster(adapter: RedisStoreAdapter<C>): Promise<C> {
    if (adapter.createCluster === undefined) {
      throw new TypeError(`redisClusterTests: adapter ${adapter.name} has no createCluster`);
    }
    const client = adapter.createCluster(cluster.startupNodes, { autoPipelining: true });
    await adapter.connect(client);
    return client;
  }

  for (const adapter of options.adapters) {
    describe(`${adapter.name} on a Redis Cluster (3 masters, 3 replicas)`, () => {
      const tag = tagOf(adapter);

      // The conformance tests of shadow mode and wait(), on the cluster (server clock), and the
      // differential traces of limits that change (client clock).
      describe('conformance: shadow mode, wait(), limits that change, costs and reservations', () => {
        let shared: C | undefined;
        beforeAll(async () => {
          shared = await openCluster(adapter);
        });
        afterAll(async () => {
          if (shared !== undefined) await adapter.disconnect(shared);
        });
        const name = `${adapter.name} on a Redis Cluster`;
        const onServerClock = makeHarness(api, {
          name,
          controlsTime: false,
          makeStore: () => adapter.makeStore(shared!),
        });
        registerControls(onServerClock);
        // Per-policy costs, debt, give-backs and the codes (a settle is a script call of its own).
        registerReservations(onServerClock);
        // Limits that change between calls, against the reference on the suite's clock: the
        // keys of one identity, read under another limit, on the master owning its slot.
        const onClientClock = makeHarness(api, {
          name: `${name} (clock: client)`,
          makeStore: ({ now }) => adapter.makeStore(shared!, { clock: 'client', now }),
          realTimeExpiry: true,
          numRuns: 10,
        });
        registerLimitChanges(onClientClock);
        // Cost records, reserve, settle and cancel in random traces, against the reference.
        registerCosts(onClientClock);
        registerClusterOverrideConformance(api, adapter, () => shared!);
      });
      registerClusterOverrideTests(
        api,
        adapter,
        () => openCluster(adapter),
        () => cluster,
      );

      it('runs each multi-policy decision as one script on the master owning the identity', async () => {
        const client = await openCluster(adapter);
        try {
          const limiter = createLimiter({
            store: adapter.makeStore(client),
            policy: policies,
            prefix: `c-${tag}`,
            onStoreError: 'throw',
            timeoutMs: 10_000, // exact counts, not timeouts: generous on a loaded machine
            blockCache: false,
          });
          const identities = Array.from({ length: 30 }, (_, i) => `user-${i}`);
          const ds = await Promise.all(
            identities.flatMap((id) =>
              Array.from({ length: 7 }, () => limiter.limit(id).then((d) => [id, d] as const)),
            ),
          );
          for (const id of identities) {
            expect(ds.filter(([i, d]) => i === id && d.allowed)).toHaveLength(4); // the log binds
          }
          // The identities really are spread over all three masters.
          const owners = new Set(
            await Promise.all(
              identities.map(
                async (id) => (await cluster.masterOf(keysFor(`c-${tag}`, id, policies)[0]!)).port,
              ),
            ),
          );
          expect(owners.size).toBe(3);
          await limiter.reset('user-0');
          expect((await limiter.limit('user-0')).remaining).toBe(3);
        } finally {
          await adapter.disconnect(client);
        }
      });

      it('blockFor and refund: the block key is in the identity slot, each call one script', async () => {
        const client = await openCluster(adapter);
        try {
          const prefix = `pb-${tag}`;
          const limiter = createLimiter({
            store: adapter.makeStore(client),
            policy: [
              fixedWindow({ limit: 2, window: '1m', blockFor: '1h' }),
              tokenBucket({ limit: 10, interval: '1d' }),
            ],
            prefix,
            onStoreError: 'throw',
            timeoutMs: 10_000,
            blockCache: false,
          });
          const identities = Array.from({ length: 12 }, (_, i) => `pb-${i}`);
          for (const id of identities) {
            await limiter.limit(id, { cost: 2 });
            const denied = await limiter.limit(id);
            expect(denied.allowed).toBe(false);
            expect(denied.retryAfterMs).toBeGreaterThan(3_500_000);
            const keys = keysFor(prefix, id, limiter.policies);
            expect(keys).toHaveLength(3);
            const master = await cluster.masterOf(keys[0]!);
            // The block key lives on the master that owns the identity's other keys.
            expect(await redisCommand(master.port, ['EXISTS', keys[2]!])).toBe(1);
            expect((await cluster.masterOf(keys[2]!)).port).toBe(master.port);
          }
          await limiter.reset(identities[0]!);
          expect((await limiter.limit(identities[0]!)).allowed).toBe(true);
          await limiter.refund(identities[0]!, { cost: 1 });
          const after = await limiter.peek(identities[0]!);
          expect(after.policies.map((p) => p.remaining)).toEqual([2, 10]);
        } finally {
          await adapter.disconnect(client);
        }
      });

      it('holds concurrency leases per identity on the master owning it', async () => {
        const client = await openCluster(adapter);
        try {
          const store = adapter.makeStore(client);
          if (!isLeaseStore(store)) throw new TypeError(`${adapter.name}: no lease support`);
          const limiter = createConcurrencyLimiter({
            store,
            limit: 4,
            leaseMs: '1m',
            prefix: `cc-${tag}`,
            timeoutMs: 10_000, // exact counts, not timeouts: generous on a loaded machine
          });
          const identities = Array.from({ length: 30 }, (_, i) => `user-${i}`);
          const leases = await Promise.all(
            identities.flatMap((id) =>
              Array.from({ length: 7 }, () => limiter.acquire(id).then((l) => [id, l] as const)),
            ),
          );
          const owners = new Set<number>();
          for (const id of identities) {
            expect(leases.filter(([i, l]) => i === id && l.allowed)).toHaveLength(4);
            const master = await cluster.masterOf(limiter.key(id));
            owners.add(master.port);
            expect(await redisCommand(master.port, ['ZCARD', limiter.key(id)])).toBe(4);
          }
          expect(owners.size).toBe(3);
          await Promise.all(leases.map(([, l]) => l.release()));
          const master = await cluster.masterOf(limiter.key('user-0'));
          expect(await redisCommand(master.port, ['EXISTS', limiter.key('user-0')])).toBe(0);
          expect((await limiter.acquire('user-0')).remaining).toBe(3);
        } finally {
          await adapter.disconnect(client);
        }
      });
    });
  }

  describe('failover', () => {
    it('is survived: the new master has no script cached (NOSCRIPT → EVAL), the state was replicated', async () => {
      const adapter = options.adapters[0]!;
      const client = await openCluster(adapter);
      try {
        const limiter = createLimiter({
          store: adapter.makeStore(client),
          policy: fixedWindow({ limit: 10, window: '1d' }),
          prefix: 'fo',
          onStoreError: 'throw',
          timeoutMs: 10_000, // exact counts, not timeouts: generous on a loaded machine
          blockCache: false,
        });
        const key = keysFor('fo', 'failover', limiter.policies)[0]!;
        const before: Decision[] = [];
        for (let i = 0; i < 4; i++) before.push(await limiter.limit('failover'));
        const master = await cluster.masterOf(key);
        const myId = String(await redisCommand(master.port, ['CLUSTER', 'MYID']));
        const nodes = String(await redisCommand(master.port, ['CLUSTER', 'NODES'])).split('\n');
        const replicaPort = Number(
          nodes
            .find((l) => l.includes(` slave ${myId}`) || l.includes(` replica ${myId}`))!
            .split(' ')[1]!
            .split(/[:@]/)[1],
        );
        // The replica has every write before it takes over.
        await redisCommand(master.port, ['WAIT', 1, 1000]);
        expect(await redisCommand(replicaPort, ['CLUSTER', 'FAILOVER'])).toBe('OK');
        const deadline = Date.now() + 10_000;
        while ((await cluster.masterOf(key)).port !== replicaPort && Date.now() < deadline)
          await sleep(50);
        expect((await cluster.masterOf(key)).port).toBe(replicaPort);
        const after: Decision[] = [];
        for (let i = 0; i < 8; i++) after.push(await limiter.limit('failover'));
        expect([...before, ...after].filter((d) => d.allowed)).toHaveLength(10);
        expect(after[0]!.remaining).toBe(5);
        expect((await commandCalls(replicaPort)).eval).toBeGreaterThanOrEqual(1);
        await cluster.waitSettled(); // the old master is back as a replica, in sync
      } finally {
        await adapter.disconnect(client);
      }
    });
  });
}
