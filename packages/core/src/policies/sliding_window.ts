import type { Policy } from '../types.js';
import { floorDiv, late, outcome, type PolicyOutcome, type PolicyState } from './common.js';
import { type WindowOptions, windowPolicy } from './define.js';

export type SlidingWindowOptions = WindowOptions;

/**
 * Two-counter approximation of a sliding window: weights the previous window by its overlap.
 * @example
 * const policy = slidingWindow({ limit: 100, window: '1m' });
 */
export function slidingWindow(options: SlidingWindowOptions): Policy {
  return windowPolicy('slidingWindow', options);
}

/** The reference (sliding_window.lua mirrors it). State `[windowStart, current, previous]`. */
export function slidingWindowOutcome(
  limit: number,
  w: number,
  s: PolicyState | undefined,
  t: number,
  cost: number,
): PolicyOutcome {
  const now = s !== undefined && s[0]! > t ? s[0]! : t;
  const shift = now - t;
  const start = now - (now % w);
  const elapsed = now - start;
  let cur = 0;
  let prev = 0;
  if (s !== undefined) {
    if (s[0] === start) {
      cur = s[1]!;
      prev = s[2]!;
    } else if (s[0] === start - w) {
      prev = s[1]!;
    }
  }
  // Integer form of prev × (w − elapsed)/w + cur + cost ≤ limit.
  const weighted = prev * (w - elapsed);
  const remaining = Math.max(0, floorDiv(limit * w - weighted, w) - cur);
  const reset = cur > 0 ? start + 2 * w - now : prev > 0 ? start + w - now : 0;
  if (weighted + (cur + cost) * w <= limit * w) {
    const next = [start, cur + cost, prev];
    return late(
      outcome(true, remaining, reset, 0, 0, next, remaining - cost, start + 2 * w - now),
      shift,
    );
  }
  let retry: number;
  if (cur + cost <= limit) {
    // Later in this window the previous window's weight has shrunk enough.
    retry = w - elapsed - floorDiv((limit - cur - cost) * w, prev);
  } else {
    // Only once this window has become the previous one, and its weight has shrunk enough.
    const into = cur > 0 ? Math.max(0, w - floorDiv((limit - cost) * w, cur)) : 0;
    retry = w - elapsed + into;
  }
  return late(outcome(false, remaining, reset, retry, 0, undefined, 0, 0), shift);
}
