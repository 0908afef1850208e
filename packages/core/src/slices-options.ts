// withSlices' input checks, apart from its hot path: every bad option or cost is a
// FloodgateError before the store is touched, as for createLimiter.
import { type Duration, parseDuration } from './duration.js';
import { FloodgateError } from './errors.js';
import type { Limiter } from './limiter-types.js';
import { checkOptions, type OptionNames } from './options.js';

/**
 * Options of `withSlices`.
 * @example
 * ```ts
 * import type { SliceOptions } from '@floodgate/core/slices';
 *
 * // 100 000 a minute per key; 4 app servers each holding at most 250 units ahead: at most
 * // 1 000 (1 %) admitted beyond the limit in any interval, none with a fixed window.
 * const options: SliceOptions = { size: 250, maxAgeMs: '500ms' };
 * ```
 * @beta
 */
export interface SliceOptions {
  /**
   * The most units leased beyond the request's own cost when a process takes a slice (fewer
   * while the process's demand for the identity is lower, or near the limit): a positive safe
   * integer. It bounds the over-admission: at most (processes × `size`) units beyond the limit in
   * any interval, none with `fixedWindow` and `quota` (a slice ends with its window).
   */
  size: number;
  /**
   * The longest a slice serves (so also how long a block or a reset made elsewhere takes to
   * reach this process), and the period over which its demand is counted: ms or a duration
   * string.
   * @default a tenth of the shortest policy window, at most 1 s
   */
  maxAgeMs?: Duration;
  /** Identities whose slices one process keeps at once; the least recently used go first. @default 10 000 */
  maxIdentities?: number;
}

const SLICE_OPTIONS = {
  size: true,
  maxAgeMs: true,
  maxIdentities: true,
} as const satisfies OptionNames<SliceOptions>;

/** `limit()`'s cost, checked as createLimiter checks it. */
export function sliceCostOf(opts: { cost?: number } | undefined, capacity: number): number {
  if (opts !== undefined && (typeof opts !== 'object' || opts === null)) {
    throw new FloodgateError('INVALID_OPTION', 'limit() takes { cost } as its options');
  }
  if (opts !== undefined) checkOptions('limit()', opts, ['cost']);
  const cost = opts?.cost === undefined ? 1 : opts.cost;
  if (typeof cost !== 'number' || !Number.isSafeInteger(cost) || cost <= 0) {
    throw new FloodgateError(
      'INVALID_COST',
      `cost must be a positive safe integer, got ${String(cost)}`,
    );
  }
  if (cost > capacity) {
    throw new FloodgateError(
      'COST_EXCEEDS_CAPACITY',
      `cost ${cost} exceeds the largest admissible cost ${capacity}`,
    );
  }
  return cost;
}

export function checkSliceOptions(limiter: Limiter, options: SliceOptions): void {
  if (typeof options !== 'object' || options === null) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'withSlices takes { size, maxAgeMs?, maxIdentities? }',
    );
  }
  checkOptions('withSlices', options, SLICE_OPTIONS);
  const positive = (v: unknown): boolean =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= 1;
  if (!positive(options.size)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      `withSlices: size must be a positive safe integer, got ${String(options.size)}`,
    );
  }
  if (options.maxIdentities !== undefined && !positive(options.maxIdentities)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'withSlices: maxIdentities must be a positive safe integer',
    );
  }
  if (options.maxAgeMs !== undefined && !(maxAgeOf(options.maxAgeMs) >= 1)) {
    throw new FloodgateError('INVALID_OPTION', 'withSlices: maxAgeMs must be at least 1 ms');
  }
  if (limiter.policies.some((p) => p.kind === 'leakyBucket')) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'withSlices: a leakyBucket admission carries a delay that a slice cannot hand out',
    );
  }
}

/** `maxAgeMs` in ms, or NaN for what is not a duration (an option here, not a policy's field). */
export function maxAgeOf(value: Duration): number {
  try {
    return parseDuration(value, 'maxAgeMs');
  } catch {
    return Number.NaN;
  }
}
