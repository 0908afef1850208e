import { type BreakerOptions, FloodgateError } from '@floodgate/core';
import { checkOptions, type OptionNames } from '@floodgate/core/internal';
import type { FleetCheckOptions } from './fleet.js';
import type { ShardHealthEvent } from './health.js';
import type { ShardMigration } from './migration.js';

/**
 * Options of {@link ShardedStore}: the clock, health, per-shard breakers and deadline, a declared
 * migration and the fleet check.
 * @example
 * ```ts
 * import { ShardedStore, type ShardedStoreOptions } from '@floodgate/cluster';
 * import type { Store } from '@floodgate/core/store';
 *
 * declare const shards: Store[];
 * const options: ShardedStoreOptions = {
 *   onHealthChange: (e) => console.warn(`shard ${e.name}: ${e.from} → ${e.to}`),
 *   breaker: { failures: 3, cooldownMs: 2_000 },
 *   timeoutMs: 100,
 * };
 * const store = new ShardedStore(shards, options);
 * ```
 * @public
 */
export interface ShardedStoreOptions {
  /**
   * The clock the limiter's blocked-key cache runs on. Shards decide on their own clocks; the
   * cache must run on the same one, so this is only needed when the shards use a client clock
   * that is not the first shard's.
   * @default the first shard's `now` when every shard has one (all on one client clock, e.g.
   * `MemoryStore`s or Redis stores with `clock: 'client'`), otherwise none (`Date.now`)
   */
  now?: () => number;
  /**
   * Called whenever a shard goes from healthy to failing or back (see `ShardState`). It runs
   * inside the failing or succeeding call: keep it quick; what it throws is ignored.
   * @default none
   */
  onHealthChange?: (event: ShardHealthEvent) => void;
  /**
   * A circuit breaker per shard (core's `BreakerOptions`): once a shard keeps failing or timing
   * out, its identities go to `onStoreError` at once instead of each waiting on the dead shard,
   * and the other shards are untouched. This is why a limiter on a ShardedStore has no breaker of
   * its own by default (`isolatesFailures`). `onStateChange` there does not name the shard: watch
   * `onHealthChange` and `health()[i].circuit` instead. `false`: no breakers.
   * @default on for each remote shard (5 failures in 10 s open it for 1 s, then 1 probe)
   */
  breaker?: boolean | BreakerOptions;
  /**
   * A deadline per shard call, in ms. Each call already gets the limiter's deadline
   * (`timeoutMs` on the limiter); this one also bounds `reset` and limiters without a deadline,
   * and the earlier of the two applies. A deadline that expires is a failure of that shard: it
   * turns the shard `'failing'` and counts toward its breaker at once, even if the shard never
   * answers. A positive integer up to 2 147 483 647.
   * @default none (the limiter's deadline only)
   */
  timeoutMs?: number;
  /**
   * A declared change of the shard list during which processes with the old list still run
   * (a rolling deploy). See {@link ShardMigration} and docs/cluster.md.
   * @default none
   * @beta
   */
  migration?: ShardMigration;
  /**
   * Every process records its topology on each remote shard, once per interval, and is told
   * when another process records a different one (a mixed fleet without a declared migration).
   * One call per shard per interval, off the decisions' path; two small keys under
   * `floodgate-fleet:{fleet}` that expire on their own. `false`: off.
   * @default on when any shard is remote, every 10 s, warning on the console
   */
  fleetCheck?: boolean | FleetCheckOptions;
}

const OPTION_NAMES = {
  now: true,
  onHealthChange: true,
  breaker: true,
  timeoutMs: true,
  migration: true,
  fleetCheck: true,
} as const satisfies OptionNames<ShardedStoreOptions>;

export function validate(options: ShardedStoreOptions): void {
  if (typeof options !== 'object' || options === null) {
    throw new FloodgateError('INVALID_OPTION', 'ShardedStore: options must be an object');
  }
  checkOptions('ShardedStore', options, OPTION_NAMES);
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'ShardedStore: now must be a function');
  }
  if (options.onHealthChange !== undefined && typeof options.onHealthChange !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'ShardedStore: onHealthChange must be a function');
  }
  const t = options.timeoutMs;
  if (t !== undefined && (!Number.isSafeInteger(t) || t <= 0 || t > 2_147_483_647)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'ShardedStore: timeoutMs must be a positive integer up to 2 147 483 647',
    );
  }
  const m = options.migration as unknown;
  if (m !== undefined) {
    if (typeof m !== 'object' || m === null) {
      throw new FloodgateError('INVALID_OPTION', 'ShardedStore: migration must be { from, until }');
    }
    for (const key of Object.keys(m)) {
      if (key !== 'from' && key !== 'until') {
        throw new FloodgateError(
          'INVALID_OPTION',
          `ShardedStore: migration: unknown field "${key}"`,
        );
      }
    }
  }
}
