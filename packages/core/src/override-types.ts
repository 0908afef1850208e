// The public shape of per-identity overrides (`createLimiter({ overrides: true })`), types only;
// overrides.ts builds them, docs/changing-limits.md tells how to use them.
import type { ReservingLimiter } from './limiter-types.js';

/**
 * What `limiter.override(identity, options)` stores for one identity.
 * @example
 * ```ts
 * import type { OverrideOptions } from '@floodgate/core';
 *
 * // A one-policy limiter: 500 instead of its own limit until the end of the day (UTC).
 * const boost: OverrideOptions = { limit: 500, until: new Date('2030-01-01T00:00:00Z') };
 * // Several policies are named; 0 blocks. A number 0 blocks every policy of any limiter.
 * const ban: OverrideOptions = { limit: 0, until: Date.now() + 3_600_000 };
 * const plan: OverrideOptions = { limit: { burst: 50, daily: 100_000 }, until: Date.now() + 86_400_000 };
 * ```
 * @beta
 */
export interface OverrideOptions {
  /**
   * The limit to run on instead of the policy's own: for a one-policy limiter a number; for
   * several, by policy name (`{ burst: 50, daily: 100_000 }`; policies not named keep their
   * own). 0 blocks: every decision of the identity is denied, with `retryAfterMs` the time to
   * `until`, and charges nothing; a number 0 blocks every policy whatever their number. Each
   * limit is checked as the policy's factory checks one (a bucket keeps its burst or queue
   * unless it equalled the limit, then it follows).
   */
  limit: number | Readonly<Record<string, number>>;
  /**
   * When the override ends by itself: a `Date` or epoch ms, in the future and at most 366 days
   * ahead (it is stored with this expiry: nothing is kept forever).
   */
  until: Date | number;
}

/**
 * An override as the store holds it (`limiter.overrides.get`).
 * @example
 * ```ts
 * import type { LimiterWithOverrides, StoredOverride } from '@floodgate/core';
 *
 * declare const limiter: LimiterWithOverrides;
 * const o: StoredOverride | undefined = await limiter.overrides.get('user_42');
 * if (o !== undefined) console.log(`until ${new Date(o.until).toISOString()}`, o.limit);
 * ```
 * @beta
 */
export interface StoredOverride {
  /** As given to `override`: a number for a one-policy limiter, else by policy name. */
  readonly limit: number | Readonly<Record<string, number>>;
  /** Epoch ms: the earliest end among its policies' parts. */
  readonly until: number;
}

/**
 * Reading and clearing a limiter's stored overrides (`limiter.overrides`).
 * @example
 * ```ts
 * import type { LimiterOverrides } from '@floodgate/core';
 *
 * declare const overrides: LimiterOverrides;
 * if ((await overrides.get('abuser_7')) !== undefined) await overrides.clear('abuser_7');
 * ```
 * @beta
 */
export interface LimiterOverrides {
  /** The identity's override in force, or undefined. One store call. */
  get(identity: string): Promise<StoredOverride | undefined>;
  /** Removes the identity's override: its next decision, in any process, runs on the policies' own limits. */
  clear(identity: string): Promise<void>;
}

/**
 * A limiter made with `overrides: true`: besides deciding, it stores per-identity overrides
 * beside the counts, which every process honours at its next decision.
 * @example
 * Blocking an abuser for an hour, from any process; every process denies them at once.
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter = createLimiter({
 *   store: new MemoryStore(),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 *   overrides: true,
 * });
 * await limiter.override('abuser_7', { limit: 0, until: Date.now() + 3_600_000 });
 * const d = await limiter.limit('abuser_7');
 * console.log(d.allowed, d.override?.until); // false, the block's end
 * ```
 * @beta
 */
export interface LimiterWithOverrides extends ReservingLimiter {
  /**
   * Stores the identity's override (replacing any it had: policies not named lose theirs). Bad
   * input is `INVALID_OVERRIDE` (`INVALID_KEY` for the identity) before the store is touched.
   */
  override(identity: string, options: OverrideOptions): Promise<void>;
  /** Reading and clearing the identities' stored overrides. */
  readonly overrides: LimiterOverrides;
}
