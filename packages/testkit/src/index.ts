export { type ConformanceOptions, storeConformance, type TestApi } from './conformance.js';
export { type RedisServer, type RedisServerOptions, startRedisServer } from './redis-server.js';
