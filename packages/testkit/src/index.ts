export {
  type Awaitable,
  type ConformanceOptions,
  type Expectation,
  type StoreContext,
  type StoreInspector,
  storeConformance,
  type TestApi,
} from './conformance.js';
export { type RedisCluster, type RedisClusterOptions, startRedisCluster } from './redis-cluster.js';
export {
  freePort,
  type RedisServer,
  type RedisServerOptions,
  type RespReply,
  redisCommand,
  redisCommands,
  startRedisServer,
} from './redis-server.js';
