export type { ShardHealth, ShardHealthEvent, ShardState } from './health.js';
export { hashTagOf } from './rendezvous.js';
export { ShardedStore, type ShardedStoreOptions, type ShardSpec } from './sharded-store.js';
