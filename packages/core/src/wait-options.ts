// `wait()`'s options, checked before any store is touched (wait.ts re-exports the check).
import { FloodgateError } from './errors.js';
import type { WaitOptions } from './limiter-types.js';
import { checkOptions, type OptionNames } from './options.js';

const WAIT_NAMES = {
  cost: true,
  maxWaitMs: true,
  signal: true,
} as const satisfies OptionNames<WaitOptions>;

/**
 * The options of `wait()`, checked before any store is touched, the cost as `limit()` checks it
 * (the limiter checks it against its capacity). Throws `INVALID_OPTION` or `INVALID_COST`.
 */
export function checkWaitOptions(options: unknown): {
  cost: number;
  maxWaitMs: number;
  signal: AbortSignal | undefined;
} {
  if (typeof options !== 'object' || options === null) {
    throw new FloodgateError('INVALID_OPTION', 'wait() takes { maxWaitMs, cost?, signal? }');
  }
  checkOptions('wait()', options, WAIT_NAMES);
  const { cost = 1, maxWaitMs, signal } = options as WaitOptions & Record<string, unknown>;
  if (typeof cost !== 'number' || !Number.isSafeInteger(cost) || cost <= 0) {
    throw new FloodgateError(
      'INVALID_COST',
      `cost must be a positive safe integer, got ${String(cost)}`,
    );
  }
  if (
    typeof maxWaitMs !== 'number' ||
    !(maxWaitMs === Number.POSITIVE_INFINITY || (Number.isSafeInteger(maxWaitMs) && maxWaitMs >= 0))
  ) {
    throw new FloodgateError(
      'INVALID_OPTION',
      `wait(): maxWaitMs must be a whole number ≥ 0 or Infinity, got ${String(maxWaitMs)}`,
    );
  }
  const s = signal as AbortSignal | undefined;
  if (
    s !== undefined &&
    (typeof s !== 'object' || s === null || typeof s.addEventListener !== 'function')
  ) {
    throw new FloodgateError('INVALID_OPTION', 'wait(): signal must be an AbortSignal');
  }
  return { cost, maxWaitMs, signal: s };
}
