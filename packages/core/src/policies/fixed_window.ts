import type { Policy } from '../types.js';
import {
  admit,
  deny,
  floorDiv,
  newVerdict,
  type PolicyOutcome,
  type PolicyState,
  toOutcome,
  type Verdict,
} from './common.js';
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

/**
 * The reference (fixed_window.lua mirrors it), writing into `v`. State `[windowStart, count]`
 * as `s0`, `s1` (`has` false: no state).
 */
export function fixedWindowKernel(
  limit: number,
  w: number,
  has: boolean,
  s0: number,
  s1: number,
  t: number,
  cost: number,
  v: Verdict,
): void {
  const now = has && s0 > t ? s0 : t;
  const shift = now - t;
  // = now - now % w, as the Lua computes it: `%` on doubles compiles to a slow x87 loop in V8.
  const start = floorDiv(now, w) * w;
  const count = has && s0 === start ? s1 : 0;
  const end = start + w - now;
  const reset = count > 0 ? end : 0;
  if (count + cost > limit) {
    deny(v, limit - count, reset, end, shift);
    return;
  }
  admit(v, limit - count, reset, 0, limit - count - cost, end, shift);
  v.n0 = start;
  v.n1 = count + cost;
}

/** `fixedWindowKernel` on an array state. */
export function fixedWindowOutcome(
  limit: number,
  w: number,
  s: PolicyState | undefined,
  t: number,
  cost: number,
): PolicyOutcome {
  const v = newVerdict();
  fixedWindowKernel(limit, w, s !== undefined, s?.[0] ?? 0, s?.[1] ?? 0, t, cost, v);
  return toOutcome(v, 2);
}
