/**
 * `@floodgate/core/concurrency`: limits on requests in flight per identity. A caller acquires a
 * lease before the work and releases it after; a lease never released frees itself after
 * `leaseMs`. Runs on any store with the lease capability (`LeaseStore`): MemoryStore, every
 * Redis store, ShardedStore. An outage is met as a rate limiter meets one: `timeoutMs`, a
 * circuit breaker, and `onStoreError` (by default the store's in-process fallback).
 * @module
 */
import { Breaker, type BreakerState } from './breaker.js';
import { readConcurrencyOptions } from './concurrency-config.js';
import { HoldTimes } from './concurrency-hold.js';
import {
  deniedLease,
  HeldLease,
  type Holder,
  type LeaseContext,
  UnheldLease,
} from './concurrency-lease.js';
import { leaseReporter, timedLeaseStore } from './concurrency-report.js';
import type { ConcurrencyLimiter, ConcurrencyLimiterOptions, Lease } from './concurrency-types.js';
import { FloodgateError, isCallerError, storeError } from './errors.js';
import { encodeIdentity, policyKey, validateIdentity } from './keys.js';
import type { LeaseEvent } from './lease-event.js';
import type { LeaseGrant, LeaseRef, LeaseRequest, LeaseStore } from './lease-types.js';
import { complainer, guardHook, storeKind, watchBreaker } from './observe.js';
import type { Store } from './store-types.js';
import { withTimeout } from './timeout.js';

export type {
  AcquireOptions,
  ConcurrencyLimiter,
  ConcurrencyLimiterOptions,
  Lease,
} from './concurrency-types.js';
export type { LeaseEvent } from './lease-event.js';

/** 128 random bits, hex: `crypto.getRandomValues` exists in Node 20, browsers, Deno, Bun, workers. */
function leaseId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  let hex = '';
  for (const b of bytes) hex += (b < 16 ? '0' : '') + b.toString(16);
  return hex;
}

type Reason = Lease['reason'];
const open = (): FloodgateError =>
  new FloodgateError('STORE_UNAVAILABLE', 'the circuit breaker is open: the store was not called');

/**
 * Limits the requests in flight per identity. Throws `FloodgateError('INVALID_OPTION')` for a bad
 * option or a store without the lease capability; `acquire` rejects with `INVALID_KEY`,
 * `INVALID_COST` or `COST_EXCEEDS_CAPACITY` before the store is touched. When the store fails,
 * times out (`timeoutMs`) or the breaker is open, `acquire` answers as `onStoreError` says (by
 * default the store's in-process fallback; `'throw'` rejects with `STORE_UNAVAILABLE` or
 * `STORE_TIMEOUT`). One store round trip per acquire, release and extend.
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
 * @public
 */
export function createConcurrencyLimiter(options: ConcurrencyLimiterOptions): ConcurrencyLimiter {
  const config = readConcurrencyOptions(options);
  const { limit, leaseMs, prefix, timeoutMs, onStoreError } = config;
  const complain = complainer();
  let breaker: Breaker | undefined;
  // Bound once, as createLimiter binds it: without telemetry the store is used as given.
  const tele = options.telemetry?.bind({
    limiter: prefix,
    store: storeKind(config.store as unknown as Store),
    breakerState: (): BreakerState | undefined => breaker?.state,
  });
  const store = tele === undefined ? config.store : timedLeaseStore(config.store, tele, complain);
  if (config.breaker !== undefined) {
    breaker = new Breaker(watchBreaker(config.breaker, tele, complain));
  }
  // Guarded: the store already failed, and the lease `onStoreError` gave stands.
  const onError = guardHook(options.onError, 'onError', complain);
  const report = leaseReporter(options.onDecision, tele, complain);
  const context: LeaseContext = { leaseMs, holds: new HoldTimes(), report };
  const primary: Holder = { store, timeoutMs, breaker };
  // The fallback is in-process: no timer and no breaker of its own (as createLimiter's).
  const secondary: Holder | undefined =
    typeof onStoreError === 'object'
      ? { store: onStoreError, timeoutMs: undefined, breaker: undefined }
      : undefined;

  const key = (identity: string): string => {
    validateIdentity(identity);
    return policyKey(prefix, encodeIdentity(identity), 'concurrency');
  };

  /** The lease a store's grant stands for, on the holder that granted it. */
  const leaseOf = (
    grant: LeaseGrant,
    ref: LeaseRef,
    identity: string,
    holder: Holder,
    reason: Reason,
  ): Lease => {
    if (grant.allowed)
      return new HeldLease(ref, identity, grant.remaining, holder, context, reason);
    const expected = context.holds.wait(grant.retryAfterMs);
    return deniedLease(grant.remaining, grant.retryAfterMs, expected, reason);
  };

  /** What `onStoreError` answers when the store could not (or the breaker kept it from asking). */
  async function fallBack(
    ref: LeaseRef,
    identity: string,
    error: FloodgateError | (() => FloodgateError),
  ): Promise<Lease> {
    if (onStoreError === 'throw') throw typeof error === 'function' ? error() : error;
    const reason: Reason =
      typeof error !== 'function' && error.code === 'STORE_TIMEOUT'
        ? 'store-timeout'
        : 'store-unavailable';
    if (onStoreError === 'allow') return new UnheldLease(identity, ref.cost, context, reason);
    if (onStoreError === 'deny') return deniedLease(0, 1000, 1000, reason);
    const grant = await fallbackAcquire(secondary!.store, ref);
    return leaseOf(grant, ref, identity, secondary!, reason);
  }

  /** A fallback store's acquire: its failure is a store failure too, never a caller's. */
  async function fallbackAcquire(fallback: LeaseStore, ref: LeaseRef): Promise<LeaseGrant> {
    try {
      return await fallback.acquireLease({ ...ref, limit, leaseMs });
    } catch (cause) {
      throw isCallerError(cause) ? cause : storeError(cause);
    }
  }

  async function acquire(identity: string, ref: LeaseRef): Promise<Lease> {
    if (breaker !== undefined && !breaker.admit()) return fallBack(ref, identity, open);
    // With a timeout, the store is told when this call gives up: a Redis script that runs
    // later (a stalled network delivers it after healing) grants nothing.
    const request: LeaseRequest =
      timeoutMs === undefined
        ? { ...ref, limit, leaseMs }
        : { ...ref, limit, leaseMs, deadline: performance.now() + timeoutMs };
    let grant: LeaseGrant;
    const asked = store.acquireLease(request);
    try {
      grant = await withTimeout(asked, timeoutMs, request.deadline);
    } catch (cause) {
      if (isCallerError(cause)) {
        breaker?.release();
        throw cause;
      }
      // A grant that still arrives (its script ran in time, its answer did not) has no holder:
      // free it when it comes.
      asked.then((late) => late.allowed && store.releaseLease(ref)).catch(() => {});
      const error = storeError(cause);
      breaker?.failure(error);
      if (onStoreError !== 'throw') onError?.(error);
      return fallBack(ref, identity, error);
    }
    breaker?.success();
    return leaseOf(grant, ref, identity, primary, undefined);
  }

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
      if (report === undefined) return acquire(identity, ref);
      const startedAt = performance.now();
      const base = { operation: 'acquire' as const, identity, cost };
      let lease: Lease;
      try {
        lease = await acquire(identity, ref);
      } catch (error) {
        const durationMs = performance.now() - startedAt;
        if (!isCallerError(error)) {
          const event = { ...base, outcome: 'error', lease: undefined, durationMs, error };
          report(event as LeaseEvent, startedAt);
        }
        throw error;
      }
      const outcome: LeaseEvent['outcome'] =
        lease.reason !== undefined ? 'fallback' : lease.allowed ? 'acquired' : 'denied';
      report({ ...base, outcome, lease, durationMs: performance.now() - startedAt }, startedAt);
      return lease;
    },
  };
}
