/**
 * `@floodgate/deno-kv`: `DenoKvStore`, exact Floodgate limits shared through Deno KV (a local
 * SQLite file, or Deno Deploy's KV), in Deno and, through `@deno/kv`, in Node.
 * @module
 */
export type { DenoKvAtomic, DenoKvEntry, DenoKvKey, DenoKvLike } from './kv-types.js';
export type { DenoKvStoreOptions } from './options.js';
export type { DenoKvStoreStats } from './stats.js';
export { DenoKvStore } from './store.js';
