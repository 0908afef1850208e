// A store call that is not a decision (a reset, a refund, an override write): bounded by the
// limiter's `timeoutMs` and counted by its circuit breaker like a decision, but with no fallback:
// its failure rejects, as a `FloodgateError`.
import type { Breaker } from './breaker.js';
import { FloodgateError, isCallerError, storeError } from './errors.js';
import { withTimeout } from './timeout.js';

/** The error an open breaker answers with: the store was not called. */
export function breakerOpen(): FloodgateError {
  return new FloodgateError(
    'STORE_UNAVAILABLE',
    'the circuit breaker is open: the store was not called',
  );
}

/**
 * Runs `work` (a store call) unless `breaker` is open, bounded by `timeoutMs` (and `deadline`);
 * a caller's error (bad input) goes through untouched and does not count against the store.
 */
export async function guarded<T>(
  breaker: Breaker | undefined,
  timeoutMs: number | undefined,
  work: () => Promise<T>,
  deadline?: number | (() => number | undefined),
): Promise<T> {
  if (breaker !== undefined && !breaker.admit()) throw breakerOpen();
  let value: T;
  try {
    value = await withTimeout(work(), timeoutMs, deadline);
  } catch (cause) {
    if (isCallerError(cause)) {
      breaker?.release();
      throw cause;
    }
    const error = storeError(cause);
    breaker?.failure(error);
    throw error;
  }
  breaker?.success();
  return value;
}
