// What `onDecision` and telemetry are told after each decision: its own file, so that the limiter's
// types and the telemetry types both read it without reading each other.
import type { FloodgateError } from './errors.js';
import type { Decision } from './types.js';

/**
 * What `onDecision` is told after each decision.
 * - `allowed`: admitted by the policies (or by the blocked-key cache never: it only denies).
 * - `denied`: denied by an enforced policy, or answered from the blocked-key cache; for `wait()`,
 *   it rejected with `WAIT_TIMEOUT` (`decision` is the denial that said so).
 * - `shadow_denied`: allowed in shadow mode where enforcing would have denied.
 * - `fallback`: decided by `onStoreError` (`'allow'`, `'deny'` or a fallback store) because the
 *   store failed, timed out or the breaker was open (`decision.reason` says which).
 * - `error`: the store failed and, `onStoreError` being `'throw'`, the call rejected (`error`).
 * Bad input (an invalid identity or cost) rejects before any decision and is not reported; nor
 * is a `wait()` that was aborted.
 * @example
 * Logging denials with the identity, and counting outcomes.
 * ```ts
 * import { createLimiter, type DecisionEvent, tokenBucket } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const counts = new Map<DecisionEvent['outcome'], number>();
 * const limiter = createLimiter({
 *   store: new MemoryStore(),
 *   policy: tokenBucket({ limit: 10, interval: '1s' }),
 *   onDecision(event) {
 *     counts.set(event.outcome, (counts.get(event.outcome) ?? 0) + 1);
 *     if (event.outcome === 'denied') console.log(`${event.identity} denied`);
 *   },
 * });
 * await limiter.limit('key_123');
 * console.log(counts.get('allowed')); // 1
 * ```
 * @public
 */
export interface DecisionEvent {
  /** What happened, as listed above. */
  readonly outcome: 'allowed' | 'denied' | 'shadow_denied' | 'fallback' | 'error';
  /** The decision; undefined when `outcome` is `'error'`. */
  readonly decision: Decision | undefined;
  /** The identity as the caller passed it (not encoded). */
  readonly identity: string;
  /** From the call to its answer, in ms (for `wait()`, the whole wait). */
  readonly durationMs: number;
  /** Which method decided. */
  readonly operation: 'limit' | 'wait' | 'reserve';
  /** The store failure, when `outcome` is `'error'`. */
  readonly error?: FloodgateError;
}
