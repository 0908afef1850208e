export type { FleetCheckOptions, MixedFleetEvent } from './fleet.js';
export type { ShardHealth, ShardHealthEvent, ShardState } from './health.js';
export type { ShardMigration } from './migration.js';
export type { ShardedStoreOptions } from './options.js';
export { hashTagOf } from './rendezvous.js';
export { ShardedStore } from './sharded-store.js';
export type { ShardSpec } from './shards.js';
