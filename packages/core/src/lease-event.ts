// What a concurrency limiter's `onDecision` and telemetry are told: its own file, as
// decision-event.ts is for rate limits, so the telemetry types read it without the limiter's.
import type { Lease } from './concurrency-types.js';
import type { FloodgateError } from './errors.js';

/**
 * What a concurrency limiter's `onDecision` is told after each acquire and each release.
 * - `acquired`: the store granted the lease.
 * - `denied`: the identity's slots were full (`lease.retryAfterMs` says for how long at most).
 * - `fallback`: the store failed, timed out or the breaker was open, and `onStoreError` answered
 *   (`lease.allowed` says how, `lease.reason` why).
 * - `error`: the store failed and the call rejected (`error`): an acquire with
 *   `onStoreError: 'throw'`, or a release.
 * - `released`: a lease was released (`heldMs`).
 * - `expired`: a release found the lease gone: it had outlived its `leaseMs` (`heldMs`).
 * Bad input (an invalid identity or cost) rejects before any store call and is not reported, nor
 * is a lease its holder never releases, nor the release of a denial.
 * @example
 * ```ts
 * import { createConcurrencyLimiter, type LeaseEvent } from '@floodgate/core/concurrency';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const held: number[] = [];
 * const limiter = createConcurrencyLimiter({
 *   store: new MemoryStore(),
 *   limit: 5,
 *   leaseMs: '1m',
 *   onDecision(event: LeaseEvent) {
 *     if (event.heldMs !== undefined) held.push(event.heldMs);
 *   },
 * });
 * ```
 * @public
 */
export interface LeaseEvent {
  /** What happened, as listed above. */
  readonly outcome: 'acquired' | 'denied' | 'fallback' | 'error' | 'released' | 'expired';
  /** Which call it was. */
  readonly operation: 'acquire' | 'release';
  /** The identity as the caller passed it (not encoded). */
  readonly identity: string;
  /** The slots asked for (acquire) or given back (release). */
  readonly cost: number;
  /** The acquire's answer; undefined for a release and for `error`. */
  readonly lease: Lease | undefined;
  /** From the call to its answer, in ms. */
  readonly durationMs: number;
  /** `released` and `expired`: ms from the grant to the release. */
  readonly heldMs?: number;
  /** The store failure, when `outcome` is `'error'`. */
  readonly error?: FloodgateError;
}
