/**
 * How a wait is spread.
 * - `'full'`: uniform in `[0, backoff]` (AWS "full jitter"; the least contention, the default).
 * - `'equal'`: half the backoff fixed, half random: never retries almost at once.
 * - `'decorrelated'`: uniform in `[base, 3 × previous wait]`, capped; each wait grows from the
 *   last one rather than from the attempt number.
 * - `'none'`: exactly the exponential backoff, and nothing added to a server delay.
 * @example
 * ```ts
 * import { type Jitter, withRetry } from '@floodgate/client';
 *
 * // Half of each backoff step is fixed: never a retry almost at once.
 * const jitter: Jitter = 'equal';
 * const api = withRetry(fetch, { jitter, baseDelayMs: 500 });
 * ```
 * @public
 */
export type Jitter = 'full' | 'equal' | 'decorrelated' | 'none';

export const JITTERS: readonly Jitter[] = ['full', 'equal', 'decorrelated', 'none'];

export interface BackoffInput {
  readonly jitter: Jitter;
  readonly baseDelayMs: number;
  readonly maxBackoffMs: number;
  /** 1 for the first retry. */
  readonly retry: number;
  /** The previous backoff wait, for `'decorrelated'`; `baseDelayMs` before the first. */
  readonly previousMs: number;
  readonly random: () => number;
}

/** The backoff wait before a retry when the server said nothing, in whole ms. */
export function backoffDelay(input: BackoffInput): number {
  const { jitter, baseDelayMs: base, maxBackoffMs: cap } = input;
  const u = unit(input.random);
  // 2 ** 1024 is Infinity; capping the exponent keeps the arithmetic finite.
  const exp = Math.min(cap, base * 2 ** Math.min(input.retry - 1, 52));
  let ms: number;
  if (jitter === 'full') ms = u * exp;
  else if (jitter === 'equal') ms = exp / 2 + (u * exp) / 2;
  else if (jitter === 'decorrelated') {
    const high = Math.max(base, Math.min(cap, input.previousMs * 3));
    ms = base + u * (high - base);
  } else ms = exp;
  return Math.round(Math.min(ms, cap));
}

/**
 * What jitter adds on top of a server-given delay: uniform in `[0, maxServerJitterMs]`, never
 * negative, so a client never comes back before the server said it could.
 */
export function serverJitter(jitter: Jitter, maxServerJitterMs: number, random: () => number) {
  if (jitter === 'none' || maxServerJitterMs <= 0) return 0;
  return Math.round(unit(random) * maxServerJitterMs);
}

/** A misbehaving random source may not push a value outside `[0, 1]`. */
function unit(random: () => number): number {
  const r = random();
  return r > 0 ? Math.min(r, 1) : 0;
}
