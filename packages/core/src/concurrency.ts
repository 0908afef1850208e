/**
 * `@floodgate/core/concurrency`: limits on requests in flight per identity. A caller acquires a
 * lease before the work and releases it after; a lease never released frees itself after
 * `leaseMs`. Runs on any store with the lease capability (`LeaseStore`): MemoryStore, every
 * Redis store, ShardedStore.
 * @module
 */
import { type Duration, parseDuration } from './duration.js';
import { FloodgateError, isFloodgateError, storeError } from './errors.js';
import { encodeIdentity, policyKey, validateIdentity, validatePrefix } from './keys.js';
import { isLeaseStore, type LeaseGrant, type LeaseRef, type LeaseStore } from './lease-types.js';
import { DEFAULT_REMOTE_TIMEOUT_MS } from './limiter-config.js';
import { checkOptions, type OptionNames } from './options.js';
import { withTimeout } from './timeout.js';

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
   * Give up on the store after this many ms: `acquire`, `release` and `extend` then reject with
   * `STORE_TIMEOUT`. A lease granted after `acquire` gave up is released as soon as its answer
   * arrives. `false`: wait as long as the store does (a Redis client may queue a command for a
   * minute or more while it reconnects).
   * @default 250 for remote stores (`store.remote`), none for in-process ones
   */
  timeoutMs?: number | false;
}

/**
 * Options of one `acquire`.
 * @example
 * ```ts
 * import type { AcquireOptions } from '@floodgate/core/concurrency';
 *
 * const heavy: AcquireOptions = { cost: 3 }; // an export job takes 3 of the identity's slots
 * ```
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
 */
export interface ConcurrencyLimiter {
  /** A lease for `identity` when `cost` slots are free; a denial (a value) otherwise. */
  acquire(identity: string, options?: AcquireOptions): Promise<Lease>;
  /** The store key holding `identity`'s leases (to inspect or delete it). */
  key(identity: string): string;
  /** The `limit` option. */
  readonly limit: number;
  /** The `leaseMs` option, in ms. */
  readonly leaseMs: number;
}

/** 128 random bits, hex: `crypto.getRandomValues` exists in Node 20, browsers, Deno, Bun, workers. */
function leaseId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let hex = '';
  for (const b of bytes) hex += (b < 16 ? '0' : '') + b.toString(16);
  return hex;
}

function durationOption(value: unknown, what: string): number {
  try {
    return parseDuration(value, what);
  } catch (error) {
    if (!isFloodgateError(error)) throw error;
    throw new FloodgateError('INVALID_OPTION', error.message);
  }
}

const OPTION_NAMES = {
  store: true,
  limit: true,
  leaseMs: true,
  prefix: true,
  timeoutMs: true,
} as const satisfies OptionNames<ConcurrencyLimiterOptions>;
const DENIED_RELEASE = (): Promise<void> => Promise.resolve();
const DENIED_EXTEND = (): Promise<boolean> => Promise.resolve(false);

/** A granted lease: remembers whether it was released, so a second release costs no trip. */
class HeldLease implements Lease {
  readonly allowed = true;
  readonly remaining: number;
  readonly #ref: LeaseRef;
  readonly #store: LeaseStore;
  readonly #leaseMs: number;
  readonly #timeoutMs: number | undefined;
  #released: Promise<void> | undefined;

  constructor(
    ref: LeaseRef,
    remaining: number,
    store: LeaseStore,
    leaseMs: number,
    timeoutMs: number | undefined,
  ) {
    this.#ref = ref;
    this.remaining = remaining;
    this.#store = store;
    this.#leaseMs = leaseMs;
    this.#timeoutMs = timeoutMs;
  }

  release(): Promise<void> {
    if (this.#released === undefined) {
      const attempt = withTimeout(this.#store.releaseLease(this.#ref), this.#timeoutMs).then(
        () => undefined,
      );
      this.#released = attempt;
      // A failed release may be tried again: forget it, the caller saw the error.
      attempt.catch(() => {
        if (this.#released === attempt) this.#released = undefined;
      });
    }
    return this.#released;
  }

  async extend(ms?: Duration): Promise<boolean> {
    const by = ms === undefined ? this.#leaseMs : durationOption(ms, 'extend(ms)');
    if (this.#released !== undefined) return false;
    return withTimeout(this.#store.extendLease(this.#ref, by), this.#timeoutMs);
  }
}

/**
 * Limits the requests in flight per identity. Throws `FloodgateError('INVALID_OPTION')` for a bad
 * option or a store without the lease capability; `acquire` rejects with `INVALID_KEY`,
 * `INVALID_COST` or `COST_EXCEEDS_CAPACITY` before the store is touched, with
 * `STORE_UNAVAILABLE` when the store fails and `STORE_TIMEOUT` past `timeoutMs`. One store round trip per acquire, release and extend.
 * @example
 * ```ts
 * import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter = createConcurrencyLimiter({ store: new MemoryStore(), limit: 2, leaseMs: '1m' });
 * const lease = await limiter.acquire('user_42');
 * if (!lease.allowed) throw new Error(`busy, retry in ${lease.retryAfterMs} ms`);
 * try {
 *   // … the work …
 * } finally {
 *   await lease.release();
 * }
 * ```
 */
export function createConcurrencyLimiter(options: ConcurrencyLimiterOptions): ConcurrencyLimiter {
  if (typeof options !== 'object' || options === null) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'createConcurrencyLimiter: options must be an object',
    );
  }
  checkOptions('createConcurrencyLimiter', options, OPTION_NAMES);
  const { store, limit } = options;
  if (typeof store !== 'object' || store === null || !isLeaseStore(store)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'createConcurrencyLimiter: store must implement acquireLease, releaseLease and extendLease',
    );
  }
  if (!Number.isSafeInteger(limit) || limit <= 0) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'createConcurrencyLimiter: limit must be a positive integer',
    );
  }
  const leaseMs = durationOption(options.leaseMs, 'createConcurrencyLimiter: leaseMs');
  const prefix = options.prefix ?? 'floodgate';
  validatePrefix(prefix);
  const t = options.timeoutMs;
  if (t !== undefined && t !== false && (!Number.isSafeInteger(t) || t <= 0)) {
    throw new FloodgateError('INVALID_OPTION', 'timeoutMs must be a positive integer or false');
  }
  const remote = (store as { remote?: unknown }).remote === true;
  const timeoutMs =
    t === false ? undefined : (t ?? (remote ? DEFAULT_REMOTE_TIMEOUT_MS : undefined));
  const key = (identity: string): string => {
    validateIdentity(identity);
    return policyKey(prefix, encodeIdentity(identity), 'concurrency');
  };
  return {
    limit,
    leaseMs,
    key,
    async acquire(identity, acquireOptions) {
      const k = key(identity);
      const cost = acquireOptions?.cost ?? 1;
      if (!Number.isSafeInteger(cost) || cost <= 0) {
        throw new FloodgateError('INVALID_COST', `cost must be a positive integer, got ${cost}`);
      }
      if (cost > limit) {
        throw new FloodgateError(
          'COST_EXCEEDS_CAPACITY',
          `cost ${cost} exceeds the limit of ${limit} leases: it can never be admitted`,
        );
      }
      const ref: LeaseRef = { key: k, id: leaseId(), cost };
      let grant: LeaseGrant;
      const asked = store.acquireLease({ ...ref, limit, leaseMs });
      try {
        grant = await withTimeout(asked, timeoutMs);
      } catch (error) {
        // Nobody will hold a lease granted after this gave up: free it when its answer comes.
        asked.then((late) => late.allowed && store.releaseLease(ref)).catch(() => {});
        throw storeError(error);
      }
      if (grant.allowed) return new HeldLease(ref, grant.remaining, store, leaseMs, timeoutMs);
      return {
        allowed: false,
        remaining: grant.remaining,
        retryAfterMs: grant.retryAfterMs,
        release: DENIED_RELEASE,
        extend: DENIED_EXTEND,
      };
    },
  };
}
