import { FloodgateError } from '../errors.js';
import type { Policy } from '../types.js';
import { admit, deny, type PolicyState, type Verdict } from './common.js';
import { type WindowOptions, windowPolicy } from './define.js';
import type { PolicyKindRow } from './kinds.js';

/**
 * Options of `slidingWindowLog`: `limit` (at most `MAX_LOG_LIMIT`) per `window`, optional `name`.
 * @example
 * ```ts
 * import { type SlidingWindowLogOptions, slidingWindowLog } from '@floodgate/core';
 *
 * const login: SlidingWindowLogOptions = { limit: 5, window: '15m', name: 'login' };
 * const policy = slidingWindowLog(login);
 * ```
 * @public
 */
export type SlidingWindowLogOptions = WindowOptions;

/**
 * The largest `limit` a slidingWindowLog takes. The log holds up to `limit` entries per identity
 * (one per admitted request), and a decision after a quiet spell trims every expired one in one
 * atomic script: at 10 000 entries that is a few ms of Redis time and about 1 MB per identity at
 * worst. Beyond that the exact log costs more than it is worth: use `slidingWindow`.
 * @example
 * Choosing the exact log where it is affordable.
 * ```ts
 * import { slidingWindow, slidingWindowLog } from '@floodgate/core';
 * import { MAX_LOG_LIMIT } from '@floodgate/core/store';
 *
 * const limit = Number(process.env.LIMIT ?? 100);
 * const policy =
 *   limit <= MAX_LOG_LIMIT
 *     ? slidingWindowLog({ limit, window: '1m' })
 *     : slidingWindow({ limit, window: '1m' });
 * ```
 * @public
 */
export const MAX_LOG_LIMIT = 10_000;

/**
 * Exact sliding window: one log entry per admitted request (with its cost); memory grows with
 * the requests in a window, so `limit` is at most `MAX_LOG_LIMIT`.
 * @example
 * ```ts
 * import { createLimiter, slidingWindowLog } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const policy = slidingWindowLog({ limit: 100, window: '1m' });
 * const limiter = createLimiter({ store: new MemoryStore(), policy });
 * ```
 * @public
 */
export function slidingWindowLog(options: SlidingWindowLogOptions): Policy {
  const p = windowPolicy(SLIDING_WINDOW_LOG, options);
  if (p.limit > MAX_LOG_LIMIT) {
    throw new FloodgateError(
      'INVALID_POLICY',
      `slidingWindowLog: limit ${p.limit} is above ${MAX_LOG_LIMIT}, more entries than an exact log serves in bounded time; use slidingWindow (the two-counter approximation) for large limits`,
    );
  }
  return p;
}

// Entries are triples [ms, before, cost]: `before` is the units admitted (by this key) before the
// entry, so the units of entries i..j are before(j) + cost(j) − before(i): counting the window
// takes two lookups, never a sum over the log. Entries are sorted by ms; one ms holds one entry.
/**
 * The reference (sliding_window_log.lua mirrors it), writing into `v` (the new log in `v.log`):
 * params `[limit, windowMs]`, state the log `s` (undefined: empty; the scalars are not read).
 * @example
 * Logs are `[ms, before, cost]` triples; an empty log admits.
 * ```ts
 * import { newVerdict, slidingWindowLogKernel } from '@floodgate/core/internal';
 *
 * const v = newVerdict();
 * slidingWindowLogKernel(100, 60_000, 0, false, 0, 0, 0, undefined, 5_000, 2, v);
 * console.log(v.log); // [5000, 0, 2]
 * ```
 * @internal
 */
export function slidingWindowLogKernel(
  limit: number,
  w: number,
  _p2: number,
  _has: boolean,
  _s0: number,
  _s1: number,
  _s2: number,
  s: PolicyState | undefined,
  t: number,
  cost: number,
  v: Verdict,
): void {
  const n = s === undefined ? 0 : s.length;
  const newest = n > 0 ? s![n - 3]! : 0;
  const now = n > 0 && newest > t ? newest : t;
  const shift = now - t;
  // The first entry in (now − w, now], by binary search (Lua: ZRANGEBYSCORE … LIMIT 0 1).
  let lo = 0;
  let hi = n / 3;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (s![mid * 3]! <= now - w) lo = mid + 1;
    else hi = mid;
  }
  const first = lo * 3;
  const total = n > 0 ? s![n - 2]! + s![n - 1]! : 0;
  const count = first < n ? total - s![first + 1]! : 0;
  const reset = count > 0 ? newest + w - now : 0;
  if (count + cost > limit && !v.force) {
    // The entry holding the k-th oldest unit must leave the window first.
    const target = (first < n ? s![first + 1]! : 0) + count + cost - limit;
    lo = first / 3;
    hi = n / 3 - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (s![mid * 3 + 1]! + s![mid * 3 + 2]! >= target) hi = mid;
      else lo = mid + 1;
    }
    // Above a lowered limit the wait still ends when enough units have left for `cost`, the
    // k-th oldest with k = count + cost − limit; nothing remains meanwhile. No entry in the
    // window: a cost above an overridden limit (none could hold its unit), denied for a window.
    const at = s?.[lo * 3];
    deny(v, Math.max(0, limit - count), reset, at === undefined ? w : at + w - now, shift);
    return;
  }
  const next = s === undefined ? [] : s.slice(first);
  if (count > 0 && newest === now) next[next.length - 1] = next[next.length - 1]! + cost;
  else next.push(now, total, cost);
  admit(v, Math.max(0, limit - count), reset, 0, limit - count - cost, w, shift);
  v.log = next;
}

/**
 * slidingWindowLog's refund (sliding_window_log.lua's `@refund`): the `cost` OLDEST units still in
 * the window leave the log (entries emptied go, a partly emptied one keeps its time). Removing
 * the oldest, not the newest, is what keeps the guarantee: every unit left then leaves the window
 * no earlier than it would have had the refunded request never been made (docs/algorithms.md).
 * Expired entries are dropped, as an admission drops them; an emptied log is deleted.
 */
export function slidingWindowLogRefund(
  _limit: number,
  w: number,
  _p2: number,
  s: PolicyState,
  t: number,
  cost: number,
): { state: PolicyState; ttlMs: number } | null | undefined {
  const n = s.length;
  if (n === 0) return undefined;
  const newest = s[n - 3]!;
  const now = Math.max(newest, t);
  let first = 0;
  while (first < n && s[first]! <= now - w) first += 3;
  if (first >= n) return undefined;
  const next = s.slice(first);
  let k = cost;
  let i = 0;
  while (k > 0 && i < next.length) {
    const c = next[i + 2]!;
    if (c <= k) {
      k -= c;
      i += 3;
    } else {
      // Its first k units go: `before` moves up by k, so the entries after it stay consistent.
      next[i + 1] = next[i + 1]! + k;
      next[i + 2] = c - k;
      k = 0;
    }
  }
  const kept = next.slice(i);
  if (kept.length === 0) return null;
  return { state: kept, ttlMs: kept[kept.length - 3]! + w - t };
}

/** slidingWindowLog's row of the kind table (table.ts). */
export const SLIDING_WINDOW_LOG: PolicyKindRow<'slidingWindowLog'> = {
  kind: 'slidingWindowLog',
  tag: 'swl',
  lua: 'sliding_window_log',
  params: 2,
  shaping: false,
  scalars: 0,
  kernel: slidingWindowLogKernel,
  refund: slidingWindowLogRefund,
};
