import type { Policy } from '../types.js';
import { late, outcome, type PolicyOutcome, type PolicyState } from './common.js';
import { type WindowOptions, windowPolicy } from './define.js';

export type FixedWindowOptions = WindowOptions;

/**
 * Counts per epoch-aligned window. Cheapest; admits up to 2 × limit across a window seam.
 * @example
 * const policy = fixedWindow({ limit: 100, window: '1m' });
 */
export function fixedWindow(options: FixedWindowOptions): Policy {
  return windowPolicy('fixedWindow', options);
}

/** The reference (fixed_window.lua mirrors it). State `[windowStart, count]`. */
export function fixedWindowOutcome(
  limit: number,
  w: number,
  s: PolicyState | undefined,
  t: number,
  cost: number,
): PolicyOutcome {
  const now = s !== undefined && s[0]! > t ? s[0]! : t;
  const shift = now - t;
  const start = now - (now % w);
  const count = s !== undefined && s[0] === start ? s[1]! : 0;
  const end = start + w - now;
  const reset = count > 0 ? end : 0;
  if (count + cost > limit) {
    return late(outcome(false, limit - count, reset, end, 0, undefined, 0, 0), shift);
  }
  return late(
    outcome(true, limit - count, reset, 0, 0, [start, count + cost], limit - count - cost, end),
    shift,
  );
}
