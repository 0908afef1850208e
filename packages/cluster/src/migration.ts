import { FloodgateError } from '@floodgate/core';
import type { PolicyResult, Store } from '@floodgate/core/store';
import type { ShardSpec } from './shards.js';

/**
 * A declared re-shard: until `until`, an identity whose owner differs between `from` (the list
 * the old processes run) and the current list is decided on both owners, so a fleet that runs
 * both lists side by side (a rolling deploy) still holds each limit. See docs/cluster.md.
 * @example
 * Growing from r1–r3 to r1–r4 with a rolling deploy that ends well before the 5th, 12:00 UTC.
 * ```ts
 * import { ShardedStore, type ShardMigration } from '@floodgate/cluster';
 * import type { Store } from '@floodgate/core/store';
 *
 * declare const r1: Store, r2: Store, r3: Store, r4: Store;
 * const migration: ShardMigration = {
 *   from: ['r1', 'r2', 'r3'],
 *   until: new Date('2026-12-05T12:00:00Z'),
 * };
 * const store = new ShardedStore(
 *   [
 *     { name: 'r1', store: r1 },
 *     { name: 'r2', store: r2 },
 *     { name: 'r3', store: r3 },
 *     { name: 'r4', store: r4 },
 *   ],
 *   { migration },
 * );
 * ```
 * @beta
 */
export interface ShardMigration {
  /**
   * The shard list the old processes run, in their order. A name stands for the current shard
   * of that name; a shard that is being removed is given as `{ name, store }` (or a store, named
   * by its index as in the constructor's list).
   */
  from: readonly (string | Store | ShardSpec)[];
  /**
   * When the migration ends: a `Date` or an epoch-milliseconds instant (not a duration), the
   * same for every process. From then on only the current owner is asked. It must come after the
   * last old process stopped by at least the longest window of your policies.
   */
  until: Date | number;
}

// 2000-01-01: a smaller number is a duration someone meant as "from now", not an instant.
const EARLIEST = 946_684_800_000;

export function untilOf(until: unknown): number {
  const at = until instanceof Date ? until.getTime() : until;
  if (typeof at !== 'number' || !Number.isFinite(at)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'ShardedStore: migration.until must be a Date or an epoch-milliseconds instant',
    );
  }
  if (at < EARLIEST) {
    throw new FloodgateError(
      'INVALID_OPTION',
      `ShardedStore: migration.until is an instant (a Date or epoch ms, e.g. Date.parse('…')), not a duration; got ${at}`,
    );
  }
  return at;
}

/**
 * One verdict from the two owners' verdicts on the same call: admitted only where both admit;
 * the smaller remaining, the longer waits.
 */
export function mergeResults(
  a: readonly PolicyResult[],
  b: readonly PolicyResult[],
): PolicyResult[] {
  return a.map((x, i) => {
    const y = b[i] ?? x;
    const allowed = x.allowed && y.allowed;
    const merged: PolicyResult = {
      allowed,
      remaining: Math.min(x.remaining, y.remaining),
      resetAfterMs: Math.max(x.resetAfterMs, y.resetAfterMs),
      retryAfterMs: allowed ? 0 : Math.max(x.retryAfterMs, y.retryAfterMs),
      delayMs: Math.max(x.delayMs, y.delayMs),
    };
    // The override either owner ran on (both hold it: overrides are written to both).
    const override = x.override ?? y.override;
    return override === undefined ? merged : { ...merged, override };
  });
}
