/**
 * Counters of one store, since it was made: commits, and the tries that lost and were made again.
 * @example
 * ```ts
 * import type { DenoKvStore, DenoKvStoreStats } from '@floodgate/deno-kv';
 *
 * declare const store: DenoKvStore;
 * const stats: DenoKvStoreStats = store.stats;
 * console.log(`${stats.conflicts} conflicts over ${stats.commits} commits`);
 * ```
 * @beta
 */
export interface DenoKvStoreStats {
  /** Atomic operations committed (one can carry several decisions of one identity). */
  readonly commits: number;
  /** Commits whose check failed (another writer changed a key in between), each then retried. */
  readonly conflicts: number;
  /**
   * Reads or commits that found a local SQLite file locked by another process (several
   * processes on one file), each then tried again: nothing was written.
   */
  readonly busy: number;
  /**
   * Calls that failed with `STORE_UNAVAILABLE` after `maxRetries` conflicts, or a file locked
   * for `busyTimeoutMs`.
   */
  readonly exhausted: number;
}

export interface MutableStats {
  commits: number;
  conflicts: number;
  busy: number;
  exhausted: number;
}
