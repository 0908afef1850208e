import { type RedisCluster, startRedisCluster } from '../redis-cluster.js';
import { registerBurst } from './cluster-burst.js';
import { registerFailover, registerStrict } from './cluster-failover.js';
import { registerResharding } from './cluster-resharding.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

/**
 * The adapters `redisClusterEventTests` runs, and the worker script its two processes run.
 * @example
 * ```ts
 * import { fileURLToPath } from 'node:url';
 * import type { NodeRedisClient } from '@floodgate/node-redis';
 * import type { RedisClusterEventTestsOptions, RedisStoreAdapter } from '@floodgate/testkit/redis';
 *
 * declare const REDIS_6: RedisStoreAdapter<NodeRedisClient>; // test/adapters.ts
 * declare const REDIS_5: RedisStoreAdapter<NodeRedisClient>;
 * // Every check on the current client; only strict mode's on the older one.
 * const options: RedisClusterEventTestsOptions<NodeRedisClient> = {
 *   adapters: [REDIS_6],
 *   strictOnly: [REDIS_5],
 *   worker: fileURLToPath(new URL('./cluster-worker.ts', import.meta.url)),
 * };
 * ```
 * @public
 */
export interface RedisClusterEventTestsOptions<C> {
  /** Adapters with `createCluster`; each gets every test, on one shared cluster, in turn. */
  adapters: readonly RedisStoreAdapter<C>[];
  /** The package's cluster worker script (absolute path): it calls `serveRedisClusterWorker`. */
  worker: string;
  /**
   * More adapters (other client generations) that run only strict mode's own checks, on the same
   * cluster: no resharding, no failover. @default []
   */
  strictOnly?: readonly RedisStoreAdapter<C>[];
  /** Node flags for the workers. @default ['--import', 'tsx'] (a TypeScript worker script) */
  execArgv?: readonly string[];
}

/**
 * The cluster events a Redis store must live through, on a throw-away 3-master/3-replica
 * cluster: resharding under traffic from two processes (exact counts, no failed decision), and a
 * SIGKILLed master under steady traffic, measured in default mode and in strict mode
 * (`replicas: { count: 1 }`, zero admissions beyond the limit). Each failover restarts the killed
 * node, which rejoins as a replica, so the next test has a full cluster again.
 * @example
 * A store package's whole `test/cluster-events.test.ts`:
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { fileURLToPath } from 'node:url';
 * import { type RedisStoreAdapter, redisClusterEventTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const IOREDIS: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts
 * redisClusterEventTests({ describe, it, expect, beforeAll, afterAll }, {
 *   adapters: [IOREDIS],
 *   worker: fileURLToPath(new URL('./cluster-worker.ts', import.meta.url)), // `await serveRedisClusterWorker(ADAPTERS)`
 * });
 * ```
 * @public
 */
export function redisClusterEventTests<C>(
  api: RedisSuiteApi,
  options: RedisClusterEventTestsOptions<C>,
): void {
  let cluster: RedisCluster | undefined;
  const get = (): RedisCluster => {
    if (cluster === undefined) throw new Error('redisClusterEventTests: no cluster yet');
    return cluster;
  };
  api.beforeAll(async () => {
    cluster = await startRedisCluster();
  }, 60_000);
  api.afterAll(async () => {
    await cluster?.stop();
  });
  for (const adapter of [...options.adapters, ...(options.strictOnly ?? [])]) {
    if (adapter.createCluster === undefined) {
      throw new TypeError(`redisClusterEventTests: adapter ${adapter.name} has no createCluster`);
    }
  }
  for (const adapter of options.adapters) {
    api.describe(`${adapter.name} on a Redis Cluster: resharding and failover`, () => {
      const setup = { adapter, worker: options.worker, execArgv: options.execArgv };
      registerResharding(api, get, setup);
      registerBurst(api, get, setup);
      registerStrict(api, get, adapter);
      registerFailover(api, get, adapter);
    });
  }
  for (const adapter of options.strictOnly ?? []) {
    api.describe(`${adapter.name} on a Redis Cluster: strict mode`, () => {
      registerStrict(api, get, adapter);
    });
  }
}
