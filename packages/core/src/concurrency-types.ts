// The concurrency limiter's public types, apart from its code (concurrency.ts) so the option,
// lease and reporting modules read them without reading each other.
import type { BreakerOptions } from './breaker.js';
import type { Duration } from './duration.js';
import type { FloodgateError } from './errors.js';
import type { LeaseEvent } from './lease-event.js';
import type { LeaseStore } from './lease-types.js';
import type { Telemetry } from './telemetry-types.js';

/**
 * Options of `createConcurrencyLimiter`.
 * @example
 * ```ts
 * import type { ConcurrencyLimiterOptions } from '@floodgate/core/concurrency';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const options: ConcurrencyLimiterOptions = {
 *   store: new MemoryStore(),
 *   limit: 10, // at most 10 requests in flight per identity
 *   leaseMs: '30s', // a holder that never releases frees its slot after 30 s
 * };
 * ```
 * @public
 */
export interface ConcurrencyLimiterOptions {
  /** A store with the lease capability: MemoryStore, any Redis store, ShardedStore. */
  store: LeaseStore;
  /** Most slots held at once per identity: a positive safe integer. */
  limit: number;
  /**
   * How long a lease lives unless released or extended: ms or a duration string. Pick it above
   * the longest honest holding time; it bounds how long a crashed holder keeps its slot.
   */
  leaseMs: Duration;
  /** Namespaces the keys: `<prefix>:{<identity>}:concurrency`. @default 'floodgate' */
  prefix?: string;
  /**
   * Give up on the store after this many ms: `acquire` then answers through `onStoreError`, and
   * `release` and `extend` reject with `STORE_TIMEOUT`. An acquire carries this deadline to a
   * Redis store, whose script grants nothing once it has passed; a lease granted anyway (its
   * answer arrived late) is released as soon as its answer arrives. `false`: wait as long as the
   * store does (a Redis client may queue a command for a minute or more while it reconnects).
   * @default 250 for remote stores (`store.remote`), none for in-process ones
   */
  timeoutMs?: number | false;
  /**
   * What `acquire` answers when the store fails, times out or the breaker is open, as for
   * `createLimiter`: a `LeaseStore` to hold the leases meanwhile (in-process, so the limit holds
   * per process), `'allow'` (granted without a slot), `'deny'` (denied, `retryAfterMs` 1000) or
   * `'throw'` (`STORE_UNAVAILABLE` / `STORE_TIMEOUT`). A lease is released and extended where it
   * was granted. The lease says `reason: 'store-unavailable'` or `'store-timeout'`.
   * @default `store.fallback()` when the store has one that holds leases (the Redis stores: an
   * in-process MemoryStore), else `'throw'`
   */
  onStoreError?: 'throw' | 'allow' | 'deny' | LeaseStore;
  /** Told of each store failure `onStoreError` absorbed (not of calls the open breaker kept). */
  onError?: (error: FloodgateError) => void;
  /**
   * A circuit breaker around the store (see `BreakerOptions`), as `createLimiter` has: once the
   * store keeps failing, acquires go to `onStoreError` at once. Releases and extends are always
   * tried (a release is how a slot comes back), bounded by `timeoutMs`.
   * @default on for remote stores that do not isolate failures themselves, off otherwise
   */
  breaker?: boolean | BreakerOptions;
  /**
   * Told after each acquire and release (see `LeaseEvent`). A hook that throws or rejects is
   * reported on the console (at most once per 10 s) and changes nothing.
   */
  onDecision?: (event: LeaseEvent) => void;
  /**
   * Where metrics and traces go: `openTelemetry()` from `@floodgate/core/telemetry` (leases
   * acquired, denied, released, expired, and how long they were held). @default none
   */
  telemetry?: Telemetry;
}

/**
 * Options of one `acquire`.
 * @example
 * ```ts
 * import type { AcquireOptions } from '@floodgate/core/concurrency';
 *
 * const heavy: AcquireOptions = { cost: 3 }; // an export job takes 3 of the identity's slots
 * ```
 * @public
 */
export interface AcquireOptions {
  /** Slots this lease takes: a positive safe integer, at most `limit`. @default 1 */
  cost?: number;
}

/**
 * What `acquire` answers. A denial is a value: `allowed` false, `retryAfterMs` set, and
 * `release`/`extend` do nothing.
 * @example
 * ```ts
 * import type { Lease } from '@floodgate/core/concurrency';
 *
 * declare const lease: Lease;
 * if (lease.allowed) {
 *   try {
 *     // … the work …
 *   } finally {
 *     await lease.release();
 *   }
 * }
 * ```
 * @public
 */
export interface Lease {
  /** Whether the lease was granted. */
  readonly allowed: boolean;
  /** Slots still free for the identity after this call. */
  readonly remaining: number;
  /**
   * Set on a denial only: ms until enough of the identity's leases expire for this cost to fit.
   * An upper bound: a holder that releases makes room earlier (one that extends, later).
   */
  readonly retryAfterMs?: number;
  /**
   * Set on a denial only: how long a slot can be expected to take to free, from how long this
   * limiter's leases were really held: the longest of the last 32 hold times (acquire to
   * release) it saw, at least 1000 ms, at most `retryAfterMs`. Equal to `retryAfterMs` until a
   * lease of this limiter was released. What `concurrencyLimit` sends as `Retry-After`.
   */
  readonly expectedWaitMs?: number;
  /**
   * Set when the store could not answer and `onStoreError` did: `'store-unavailable'` (it failed,
   * or the breaker was open) or `'store-timeout'`.
   */
  readonly reason?: 'store-unavailable' | 'store-timeout';
  /**
   * Frees the lease's slots. Idempotent and safe after expiry: it removes only this lease (its
   * id is unique), never one granted later to someone else. After a failed attempt it may be
   * called again; meanwhile the lease still expires on its own.
   */
  release(): Promise<void>;
  /**
   * Moves the expiry of a live lease to `ms` from now (default `leaseMs`). Resolves false, and
   * changes nothing, when the lease has expired or was released.
   */
  extend(ms?: Duration): Promise<boolean>;
}

/**
 * A concurrency limiter: `acquire` before the work, `release` after.
 * @example
 * ```ts
 * import type { ConcurrencyLimiter } from '@floodgate/core/concurrency';
 *
 * declare const limiter: ConcurrencyLimiter;
 * const lease = await limiter.acquire('user_42');
 * console.log(limiter.limit, lease.remaining);
 * ```
 * @public
 */
export interface ConcurrencyLimiter {
  /**
   * A lease for `identity` when `cost` slots are free; a denial (a value) otherwise. When the
   * store fails, what `onStoreError` says.
   */
  acquire(identity: string, options?: AcquireOptions): Promise<Lease>;
  /** The store key holding `identity`'s leases (to inspect or delete it). */
  key(identity: string): string;
  /** The `limit` option. */
  readonly limit: number;
  /** The `leaseMs` option, in ms. */
  readonly leaseMs: number;
}
