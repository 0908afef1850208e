// Per-identity overrides on a Redis Cluster (registered by redisClusterTests): the conformance
// tests on the cluster, on both clocks, and where the keys live: an override key is in its
// identity's slot, so a decision that reads it is still one script on the master owning it.
import { createLimiter, fixedWindow, tokenBucket } from '@floodgate/core';
import { encodeIdentity, overrideKey, policyKey } from '@floodgate/core/store';
import { makeHarness } from '../conformance/harness.js';
import { registerOverrides } from '../conformance/overrides.js';
import type { RedisCluster } from '../redis-cluster.js';
import { commandCalls, delta } from '../redis-inspect.js';
import { redisCommand } from '../resp.js';
import { tagOf } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

/** The conformance tests of overrides on a shared cluster client, on both clocks. */
export function registerClusterOverrideConformance<C>(
  api: RedisSuiteApi,
  adapter: RedisStoreAdapter<C>,
  shared: () => C,
): void {
  const name = `${adapter.name} on a Redis Cluster, overrides`;
  registerOverrides(
    makeHarness(api, {
      name: `${name} (clock: client)`,
      makeStore: ({ now }) => adapter.makeStore(shared(), { clock: 'client', now }),
      realTimeExpiry: true,
      numRuns: 10,
    }),
  );
  registerOverrides(
    makeHarness(api, {
      name: `${name} (clock: server)`,
      controlsTime: false,
      makeStore: () => adapter.makeStore(shared()),
    }),
  );
}

/** Override keys in the identity's slot; one EVALSHA per decision, on its master alone. */
export function registerClusterOverrideTests<C>(
  api: RedisSuiteApi,
  adapter: RedisStoreAdapter<C>,
  openCluster: () => Promise<C>,
  cluster: () => RedisCluster,
): void {
  const { it, expect } = api;
  it('overrides: each override key on the master owning its identity; one script per decision', async () => {
    const client = await openCluster();
    try {
      const prefix = `ov-${tagOf(adapter)}`;
      const policies = [
        tokenBucket({ limit: 10, interval: '1d', name: 'tb' }),
        fixedWindow({ limit: 2, window: '1d', name: 'fw' }),
      ];
      const limiter = createLimiter({
        store: adapter.makeStore(client),
        policy: policies,
        prefix,
        onStoreError: 'throw',
        timeoutMs: 10_000, // exact counts, not timeouts: generous on a loaded machine
        blockCache: false,
        overrides: true,
      });
      const until = Date.now() + 3_600_000;
      const identities = Array.from({ length: 24 }, (_, i) => `ov-${i}`);
      const owners = new Set<number>();
      for (const id of identities) {
        await limiter.override(id, { limit: { fw: 4 }, until });
        const own = policies.map((p) => policyKey(prefix, encodeIdentity(id), p.id));
        const master = await cluster().masterOf(own[0]!);
        owners.add(master.port);
        const key = overrideKey(own[1]!);
        expect((await cluster().masterOf(key)).port).toBe(master.port);
        expect(await redisCommand(master.port, ['EXISTS', key])).toBe(1);
        await limiter.limit(id); // the script is cached on this master from here on
        const before = await Promise.all(cluster().nodes.map((n) => commandCalls(n.port)));
        const ds = [];
        for (let i = 0; i < 4; i++) ds.push(await limiter.limit(id));
        expect(ds.map((d) => d.allowed)).toEqual([true, true, true, false]);
        expect(ds[0]!.policies[1]!.override).toEqual({ limit: 4, until });
        const after = await Promise.all(cluster().nodes.map((n) => commandCalls(n.port)));
        cluster().nodes.forEach((n, i) => {
          const scripts = delta(before[i]!, after[i]!).evalsha ?? 0;
          expect(scripts, `EVALSHA on ${n.port}`).toBe(n.port === master.port ? 4 : 0);
        });
      }
      expect(owners.size).toBe(3);
      await limiter.overrides.clear(identities[0]!);
      expect((await limiter.limit(identities[0]!)).allowed, 'back to 2 a day').toBe(false);
    } finally {
      await adapter.disconnect(client);
    }
  });
}
