import type { Policy } from '../types.js';
import { admit, deny, floorDiv, type PolicyState, type Verdict } from './common.js';
import { type WindowOptions, windowPolicy } from './define.js';
import type { PolicyKindRow } from './kinds.js';

/**
 * Options of `fixedWindow`: `limit` units per epoch-aligned `window`, and an optional `name`.
 * @example
 * ```ts
 * import { type FixedWindowOptions, fixedWindow } from '@floodgate/core';
 *
 * const daily: FixedWindowOptions = { limit: 10_000, window: '1d', name: 'daily' };
 * const policy = fixedWindow(daily);
 * ```
 * @public
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
 * @public
 */
export function fixedWindow(options: FixedWindowOptions): Policy {
  return windowPolicy(FIXED_WINDOW, options);
}

/**
 * The reference (fixed_window.lua mirrors it), writing into `v`: params `[limit, windowMs]`,
 * state `[windowStart, count]` as `s0`, `s1` (`has` false: no state).
 * @example
 * The first request of a window: admitted, and the state to store is `[windowStart, 1]`.
 * ```ts
 * import { fixedWindow } from '@floodgate/core';
 * import { fixedWindowKernel, newVerdict } from '@floodgate/core/internal';
 *
 * const [limit, windowMs, unused] = fixedWindow({ limit: 10, window: '1m' }).params;
 * const v = newVerdict();
 * fixedWindowKernel(limit, windowMs, unused, false, 0, 0, 0, undefined, 90_000, 1, v);
 * console.log(v.allowed, v.n0, v.n1); // true 60000 1
 * ```
 * @internal
 */
export function fixedWindowKernel(
  limit: number,
  w: number,
  _p2: number,
  has: boolean,
  s0: number,
  s1: number,
  _s2: number,
  _log: PolicyState | undefined,
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
  if (count + cost > limit && !v.force) {
    // A count above the limit (the limit was lowered within the window) leaves nothing, and
    // still frees at the window's end: the count does not depend on the limit it was made under.
    deny(v, Math.max(0, limit - count), reset, end, shift);
    return;
  }
  admit(v, Math.max(0, limit - count), reset, 0, limit - count - cost, end, shift);
  v.n0 = start;
  v.n1 = count + cost;
}

/**
 * fixedWindow's refund (fixed_window.lua's `@refund`): the current window's count goes down by
 * `cost`, not below 0; a count of an earlier window gives nothing back.
 */
export function fixedWindowRefund(
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
  // The window's end, counted from the caller's clock as every TTL is.
  return { state: [start, Math.max(0, s[1]! - cost)], ttlMs: start + w - t };
}

/**
 * The radix that packs a window's count beside its number in Redis (fixed_window.lua): the state
 * is the integer `k × radix + count` for window `k`, int-encoded where `count < radix` and the
 * integer stays below 2^53. It depends on the window alone, never on the limit, so the count a key
 * holds reads the same under any limit. A power of two, `2^53 / 2^e` with `2^e` the least power
 * of two above `floor(2^42 / w)`, the last window number before 2^42 ms (the year 2109): every
 * window until then packs, and a division by it is exact. 2^26 for a minute, 2^20 for a second.
 * The Lua computes it with `math.frexp` from the same double `2^42 / w`.
 */
export function windowRadix(w: number): number {
  return 2 ** (53 - windowBits(w));
}

/**
 * `e` of the least power of two `2^e` above `floor(2^42 / w)`, the last window number before
 * 2^42 ms: the exponent Lua's `math.frexp` returns for that number (0 for 0).
 */
export function windowBits(w: number): number {
  const last = Math.floor(2 ** 42 / w);
  let e = 0;
  while (2 ** e <= last) e++;
  return e;
}

/** fixedWindow's row of the kind table (table.ts). */
export const FIXED_WINDOW: PolicyKindRow<'fixedWindow'> = {
  kind: 'fixedWindow',
  tag: 'fw',
  lua: 'fixed_window',
  params: 2,
  shaping: false,
  scalars: 2,
  kernel: fixedWindowKernel,
  refund: fixedWindowRefund,
};
