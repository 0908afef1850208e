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

/**
 * Options of `fixedWindow`: `limit` units per epoch-aligned `window`, and an optional `name`.
 * @example
 * ```ts
 * import { type FixedWindowOptions, fixedWindow } from '@floodgate/core';
 *
 * const daily: FixedWindowOptions = { limit: 10_000, window: '1d', name: 'daily' };
 * const policy = fixedWindow(daily);
 * ```
 */
export type FixedWindowOptions = WindowOptions;

/**
 * Counts per epoch-aligned window. Cheapest; admits up to 2 × limit across a window seam.
 * @example
 * ```ts
 * import { createLimiter, fixedWindow } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const policy = fixedWindow({ limit: 100, window: '1m' });
 * const limiter = createLimiter({ store: new MemoryStore(), policy });
 * ```
 */
export function fixedWindow(options: FixedWindowOptions): Policy {
  return windowPolicy('fixedWindow', options);
}

/**
 * The reference (fixed_window.lua mirrors it), writing into `v`. State `[windowStart, count]`
 * as `s0`, `s1` (`has` false: no state).
 * @example
 * The first request of a window: admitted, and the state to store is `[windowStart, 1]`.
 * ```ts
 * import { fixedWindow } from '@floodgate/core';
 * import { fixedWindowKernel, newVerdict } from '@floodgate/core/internal';
 *
 * const [limit, windowMs] = fixedWindow({ limit: 10, window: '1m' }).params;
 * const v = newVerdict();
 * fixedWindowKernel(limit, windowMs, false, 0, 0, 90_000, 1, v);
 * console.log(v.allowed, v.n0, v.n1); // true 60000 1
 * ```
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
