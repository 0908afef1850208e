/**
 * `@floodgate/testkit/redis`: throw-away `redis-server` processes (one node or a cluster), a fault
 * proxy, key and command inspection, and the suites every Redis-protocol store runs. The
 * messages between a suite and its worker processes stay private: a store's worker file only
 * calls `serveRedisWorker` / `serveRedisClusterWorker` / `serveChaosWorker`.
 */
export {
  type FaultProxy,
  type FaultProxyOptions,
  type ProxyFault,
  startFaultProxy,
} from '../fault-proxy.js';
export {
  type RedisCluster,
  type RedisClusterOptions,
  startRedisCluster,
} from '../redis-cluster.js';
export {
  type ClusterNodeView,
  type ClusterTopology,
  parseClusterNodes,
  settledTopology,
} from '../redis-cluster-topology.js';
export {
  type RedisHttpBridge,
  type RedisHttpBridgeOptions,
  type RedisHttpBridgeRequests,
  startRedisHttpBridge,
} from '../redis-http-bridge.js';
export { allKeysWithTtl, commandCalls, delta, keysFor, rng } from '../redis-inspect.js';
export {
  freePort,
  type RedisServer,
  type RedisServerOptions,
  startRedisServer,
} from '../redis-server.js';
export { type RedisBatchTestsOptions, redisBatchTests } from '../redis-suite/batch.js';
export { type RedisChaosTestsOptions, redisChaosTests } from '../redis-suite/chaos.js';
export { serveChaosWorker } from '../redis-suite/chaos-worker.js';
export { type RedisClusterTestsOptions, redisClusterTests } from '../redis-suite/cluster.js';
export {
  type RedisClusterEventTestsOptions,
  redisClusterEventTests,
} from '../redis-suite/cluster-events.js';
export { type FailoverMeasurement, measureFailover } from '../redis-suite/cluster-failover.js';
export { killMasterOf, migrateSlot, nodeId, rejoin, slotOf } from '../redis-suite/cluster-ops.js';
export { serveRedisClusterWorker } from '../redis-suite/cluster-worker.js';
export {
  type RedisConformanceOptions,
  redisConformance,
  redisInspector,
} from '../redis-suite/conformance.js';
export { type RedisFaultTestsOptions, redisFaultTests } from '../redis-suite/faults.js';
export {
  type RedisInvalidationTestsOptions,
  redisInvalidationTests,
} from '../redis-suite/invalidation.js';
export { serveInvalidationWorker } from '../redis-suite/invalidation-worker.js';
export {
  type RedisMultiprocessTestsOptions,
  type RedisWorkerSpec,
  redisMultiprocessTests,
} from '../redis-suite/multiprocess.js';
export { redisLeaseMultiprocessTests } from '../redis-suite/multiprocess-leases.js';
export {
  type RedisProxyFaultTestsOptions,
  redisProxyFaultTests,
} from '../redis-suite/proxy-faults.js';
export { expectScriptFlushSurvived } from '../redis-suite/script-flush.js';
export {
  type RedisServerClockTestsOptions,
  redisServerClockTests,
} from '../redis-suite/server-clock.js';
export { expectStoreUnavailable, openClient, useRedisServer } from '../redis-suite/shared.js';
export {
  type RedisSharedFeedTestsOptions,
  redisSharedFeedTests,
} from '../redis-suite/shared-feed.js';
export { type RedisStoreTestsOptions, redisStoreTests } from '../redis-suite/store.js';
export type {
  RedisClientOptions,
  RedisExpectation,
  RedisNodeAddress,
  RedisStoreAdapter,
  RedisSuiteApi,
} from '../redis-suite/types.js';
export { serveRedisWorker } from '../redis-suite/worker.js';
export { type RespReply, redisCommand, redisCommands } from '../resp.js';
