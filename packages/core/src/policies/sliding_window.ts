import type { Policy } from '../types.js';
import { admit, deny, floorDiv, type PolicyState, type Verdict } from './common.js';
import { type WindowOptions, windowPolicy } from './define.js';
import { windowBits } from './fixed_window.js';
import type { PolicyKindRow } from './kinds.js';

/**
 * Options of `slidingWindow`: `limit` units per sliding `window`, and an optional `name`.
 * @example
 * ```ts
 * import { type SlidingWindowOptions, slidingWindow } from '@floodgate/core';
 *
 * const perMinute: SlidingWindowOptions = { limit: 600, window: '1m', name: 'per-minute' };
 * const policy = slidingWindow(perMinute);
 * ```
 * @public
 */
export type SlidingWindowOptions = WindowOptions;

/**
 * Two-counter approximation of a sliding window: weights the previous window by its overlap.
 * @example
 * ```ts
 * import { createLimiter, slidingWindow } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const policy = slidingWindow({ limit: 100, window: '1m' });
 * const limiter = createLimiter({ store: new MemoryStore(), policy });
 * ```
 * @public
 */
export function slidingWindow(options: SlidingWindowOptions): Policy {
  return windowPolicy(SLIDING_WINDOW, options);
}

/**
 * The reference (sliding_window.lua mirrors it), writing into `v`: params `[limit, windowMs]`,
 * state `[windowStart, current, previous]` as `s0`, `s1`, `s2`.
 * @example
 * State `[windowStart, current, previous]`: 60 s into a window after a full previous one.
 * ```ts
 * import { newVerdict, slidingWindowKernel } from '@floodgate/core/internal';
 *
 * const v = newVerdict();
 * slidingWindowKernel(100, 60_000, 0, true, 60_000, 0, 100, undefined, 90_000, 1, v);
 * console.log(v.allowed, v.remaining); // previous window still weighs half
 * ```
 * @internal
 */
export function slidingWindowKernel(
  limit: number,
  w: number,
  _p2: number,
  has: boolean,
  s0: number,
  s1: number,
  s2: number,
  _log: PolicyState | undefined,
  t: number,
  cost: number,
  v: Verdict,
): void {
  const now = has && s0 > t ? s0 : t;
  const shift = now - t;
  // = now - now % w, as the Lua computes it: `%` on doubles compiles to a slow x87 loop in V8.
  const start = floorDiv(now, w) * w;
  const elapsed = now - start;
  let cur = 0;
  let prev = 0;
  if (has) {
    if (s0 === start) {
      cur = s1;
      prev = s2;
    } else if (s0 === start - w) {
      prev = s1;
    }
  }
  // Integer form of prev × (w − elapsed)/w + cur + cost ≤ limit.
  const weighted = prev * (w - elapsed);
  const remaining = Math.max(0, floorDiv(limit * w - weighted, w) - cur);
  const reset = cur > 0 ? start + 2 * w - now : prev > 0 ? start + w - now : 0;
  if (weighted + (cur + cost) * w <= limit * w || v.force) {
    admit(v, remaining, reset, 0, remaining - cost, start + 2 * w - now, shift);
    v.n0 = start;
    v.n1 = cur + cost;
    v.n2 = prev;
    return;
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
  deny(v, remaining, reset, retry, shift);
}

/**
 * slidingWindow's refund (sliding_window.lua's `@refund`): the current window's count goes down
 * by `cost`, not below 0; the previous window's count (and an older state) gives nothing back.
 */
export function slidingWindowRefund(
  _limit: number,
  w: number,
  _p2: number,
  s: PolicyState,
  t: number,
  cost: number,
): { state: PolicyState; ttlMs: number } | undefined {
  const now = Math.max(s[0]!, t);
  const start = floorDiv(now, w) * w;
  if (s[0] !== start || s[1]! === 0) return undefined;
  return { state: [start, Math.max(0, s[1]! - cost), s[2]!], ttlMs: start + 2 * w - t };
}

/**
 * The radix that packs the two counts beside the window number in Redis (sliding_window.lua):
 * `(k × radix + current) × radix + previous`, int-encoded where both counts are below the radix
 * and the integer below 2^53. Like fixedWindow's (`windowRadix`) it depends on the window alone,
 * never on the limit: `2^floor((53 − e) / 2)`, `2^e` the least power of two above the last window
 * number before 2^42 ms. 8 192 for a minute, 1 024 for a second, 65 536 for an hour.
 */
export function slidingRadix(w: number): number {
  return 2 ** Math.floor((53 - windowBits(w)) / 2);
}

/** slidingWindow's row of the kind table (table.ts). */
export const SLIDING_WINDOW: PolicyKindRow<'slidingWindow'> = {
  kind: 'slidingWindow',
  tag: 'sw',
  lua: 'sliding_window',
  params: 2,
  shaping: false,
  scalars: 3,
  kernel: slidingWindowKernel,
  refund: slidingWindowRefund,
};
