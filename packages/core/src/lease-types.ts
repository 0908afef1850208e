// The lease capability of a store, types and one guard: what `createConcurrencyLimiter`
// (concurrency.ts) needs from a store. Optional: a store without it still serves every rate
// limiter. `@floodgate/core/store` re-exports it.

/**
 * One lease as the store knows it: its identity's key, its unique id, and how many slots it
 * takes. The limiter keeps it and hands it back to release or extend the lease.
 * @example
 * ```ts
 * import type { LeaseRef } from '@floodgate/core/store';
 *
 * const lease: LeaseRef = { key: 'floodgate:{user_42}:concurrency', id: '9f0c…', cost: 1 };
 * ```
 * @public
 */
export interface LeaseRef {
  /** `<prefix>:{<encoded identity>}:concurrency`: the identity's hash tag, one cluster slot. */
  readonly key: string;
  /** Unique per lease (128 random bits, hex): a release can only ever free its own lease. */
  readonly id: string;
  /** Slots the lease takes: a positive safe integer, at most the limit. */
  readonly cost: number;
}

/**
 * A request for a lease: admit it when the identity's live leases plus `cost` fit in `limit`.
 * @example
 * ```ts
 * import type { LeaseRequest } from '@floodgate/core/store';
 *
 * const request: LeaseRequest = {
 *   key: 'floodgate:{user_42}:concurrency',
 *   id: '0123456789abcdef0123456789abcdef',
 *   cost: 1,
 *   limit: 10,
 *   leaseMs: 30_000,
 * };
 * ```
 * @public
 */
export interface LeaseRequest extends LeaseRef {
  /** Most slots held at once by the identity's live leases. */
  readonly limit: number;
  /** The lease frees itself this long after it was granted (or last extended). */
  readonly leaseMs: number;
  /**
   * The `performance.now()` instant from which the caller may have given up on this request
   * (the limiter's `timeoutMs`). A remote store grants nothing from then on, so a request that
   * reaches it late (a stalled network delivers it after healing) holds no slot; an in-process
   * store, which answers at once, may ignore it. Absent: no deadline.
   */
  readonly deadline?: number;
}

/**
 * A store's answer to a `LeaseRequest`.
 * @example
 * ```ts
 * import type { LeaseGrant, LeaseStore } from '@floodgate/core/store';
 *
 * declare const store: LeaseStore;
 * const grant: LeaseGrant = await store.acquireLease({
 *   key: 'floodgate:{user_42}:concurrency', id: 'a1', cost: 1, limit: 10, leaseMs: 30_000,
 * });
 * if (!grant.allowed) console.log(`full; a slot expires within ${grant.retryAfterMs} ms`);
 * ```
 * @public
 */
export interface LeaseGrant {
  readonly allowed: boolean;
  /** Slots free after this call (0 when denied and full). */
  readonly remaining: number;
  /**
   * 0 when allowed. When denied: ms until enough of the live leases expire for `cost` slots to
   * be free, if none of them is released or extended first.
   */
  readonly retryAfterMs: number;
}

/**
 * The optional lease capability of a store: what a concurrency limiter runs on. Each method is
 * one atomic step on the store, one round trip for a remote one, and first drops the leases of
 * the identity that expired (on the store's clock: Redis `TIME` by default).
 * @example
 * ```ts
 * import { isLeaseStore, type Store } from '@floodgate/core/store';
 *
 * declare const store: Store;
 * if (!isLeaseStore(store)) throw new Error('this store cannot hold leases');
 * const freed = await store.releaseLease({ key: 'floodgate:{user_42}:concurrency', id: 'a1', cost: 1 });
 * ```
 * @public
 */
export interface LeaseStore {
  /** Grants the lease when `cost` slots are free, else changes nothing. */
  acquireLease(request: LeaseRequest): Promise<LeaseGrant>;
  /** Frees the lease's slots if it is still live; true when it was. Freeing twice is harmless. */
  releaseLease(lease: LeaseRef): Promise<boolean>;
  /** Moves a live lease's expiry to `leaseMs` from now; false (and no change) when it is gone. */
  extendLease(lease: LeaseRef, leaseMs: number): Promise<boolean>;
}

/**
 * True when `store` implements the lease capability.
 * @example
 * ```ts
 * import { isLeaseStore } from '@floodgate/core/store';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * console.log(isLeaseStore(new MemoryStore())); // true
 * ```
 * @public
 */
export function isLeaseStore<S extends object>(store: S): store is S & LeaseStore {
  const s = store as Partial<LeaseStore>;
  return (
    typeof s.acquireLease === 'function' &&
    typeof s.releaseLease === 'function' &&
    typeof s.extendLease === 'function'
  );
}
