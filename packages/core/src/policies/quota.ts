import { type CalendarPeriods, calendarOf } from '../calendar.js';
import type { OptionNames } from '../options.js';
import type { Policy } from '../types.js';
import { admit, deny, type PolicyState, type Verdict } from './common.js';
import { calendarPolicy, type Named } from './define.js';
import type { Kernel, PolicyKindRow, RefundKernel } from './kinds.js';

/**
 * Options of `quota`: `limit` units per calendar period (`per`) in an IANA `timeZone`, and an
 * optional `name`.
 * @example
 * ```ts
 * import { type QuotaOptions, quota } from '@floodgate/core';
 *
 * const monthly: QuotaOptions = { limit: 100_000, per: 'month', timeZone: 'America/New_York' };
 * const policy = quota(monthly);
 * ```
 * @public
 */
export interface QuotaOptions extends Named {
  /** Units admitted per period. */
  limit: number;
  /** The period: a day from local midnight, a week from Monday's, a month from the 1st's. */
  per: 'day' | 'week' | 'month';
  /** The IANA time zone whose midnights start the periods, daylight-saving changes included. @default 'UTC' */
  timeZone?: string;
}

// The factory's option names, which the compiler keeps in step with its options type.
const QUOTA_NAMES = {
  limit: true,
  per: true,
  timeZone: true,
  name: true,
  blockFor: true,
  shadow: true,
} as const satisfies OptionNames<QuotaOptions>;

/**
 * Counts per calendar period: a day, a week from Monday or a month from the 1st, each starting at
 * local midnight in `timeZone`. The count starts afresh at the real next midnight, whether that
 * day has 23, 24 or 25 hours, and `resetAfterMs` / `retryAfterMs` say exactly when. Compose it
 * with a rate policy for "10 per second and 100 000 per month".
 * @example
 * ```ts
 * import { createLimiter, quota, tokenBucket } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter = createLimiter({
 *   store: new MemoryStore(),
 *   policy: [
 *     tokenBucket({ limit: 10, interval: '1s' }),
 *     quota({ limit: 100_000, per: 'month', timeZone: 'Europe/Berlin' }),
 *   ],
 * });
 * const d = await limiter.limit('customer-42');
 * ```
 * @public
 */
export function quota(options: QuotaOptions): Policy {
  return calendarPolicy(QUOTA, options, QUOTA_NAMES);
}

/**
 * The reference (quota.lua mirrors it), writing into `v`: `limit` and `end`, the end of the
 * period holding `t` (its next local midnight); state `[periodEnd, count]` as `s0`, `s1`. A
 * state that ends later than `end` was written by a caller whose clock is ahead: this caller is
 * counted in that period (time never runs backward for a key), and its waits run to that end.
 * Every duration is `end − t`: from this caller's clock, whichever period it is counted in.
 * @example
 * The first request of a Berlin day that has 23 hours: the count resets at the next midnight.
 * ```ts
 * import { newVerdict, quotaKernel } from '@floodgate/core/internal';
 *
 * const start = Date.UTC(2024, 2, 30, 23); // 2024-03-31 00:00 in Berlin
 * const end = Date.UTC(2024, 2, 31, 22); // 2024-04-01 00:00 in Berlin
 * const v = newVerdict();
 * quotaKernel(100, end, 0, false, 0, 0, 0, undefined, start, 1, v);
 * console.log(v.allowed, v.nextResetAfterMs / 3_600_000); // true 23
 * ```
 * @internal
 */
export function quotaKernel(
  limit: number,
  end: number,
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
  const kept = has && s0 >= end;
  const finish = kept ? s0 : end;
  const count = kept ? s1 : 0;
  const wait = finish - t;
  const reset = count > 0 ? wait : 0;
  if (count + cost > limit && !v.force) {
    // A count above a lowered limit leaves nothing until the period ends.
    deny(v, Math.max(0, limit - count), reset, wait, 0);
    return;
  }
  admit(v, Math.max(0, limit - count), reset, 0, limit - count - cost, wait, 0);
  v.n0 = finish;
  v.n1 = count + cost;
}

/**
 * The end of the period holding `t`, from the three ends a caller sent for its own clock
 * (`b0` ≤ its now < `b1` < `b2`), as quota.lua picks it by Redis `TIME`: `b1` or `b2` when `t`
 * falls in `[b0, b1)` or `[b1, b2)`; `b0` when `t` is before `b0` (a server clock behind the
 * caller's is counted in the period ending at `b0`: exact within a period of skew, and beyond,
 * it waits longer, never admits more); NaN past `b2`, where the script refuses the call (it
 * cannot know that period's end).
 * @internal
 */
export function quotaPeriodEnd(b0: number, b1: number, b2: number, t: number): number {
  if (t >= b2) return Number.NaN;
  if (t >= b1) return b2;
  if (t >= b0) return b1;
  return b0;
}

// One CalendarPeriods per policy, looked up without building a key per call.
const periods = new WeakMap<Policy, CalendarPeriods>();
const kernels = new WeakMap<Policy, Kernel>();

function periodsOf(policy: Policy): CalendarPeriods {
  let c = periods.get(policy);
  if (c === undefined) {
    const calendar = policy.calendar!;
    c = calendarOf(calendar.per, calendar.timeZone);
    periods.set(policy, c);
  }
  return c;
}

/** The quota's three period ends around `now`, as ARGV strings (cached until the period ends). */
function writePeriods(policy: Policy, now: number, target: string[], at: number): void {
  const c = periodsOf(policy).at(now);
  target[at] = c.s0;
  target[at + 1] = c.s1;
  target[at + 2] = c.s2;
}

/** The kernel of one quota for in-process stores: the period is the one holding their `t`. */
function kernelFor(policy: Policy): Kernel {
  let k = kernels.get(policy);
  if (k === undefined) {
    const c = periodsOf(policy);
    k = (limit, _p1, _p2, has, s0, s1, s2, log, t, cost, v) =>
      quotaKernel(limit, c.at(t).b1, 0, has, s0, s1, s2, log, t, cost, v);
    kernels.set(policy, k);
  }
  return k;
}

/**
 * The radix that packs a period's count beside its end (in minutes) in Redis (quota.lua):
 * `(end / 60 000) × 2^26 + count`, fixedWindow's radix for a minute (`windowRadix(60_000)`): ends
 * stay below 2^27 minutes until 2225, and the count reads the same under any limit.
 */
export const QUOTA_RADIX = 67_108_864;

/**
 * quota's refund (quota.lua's `@refund`), with `end` the period's end at `t` (as `quotaKernel`
 * takes it): the current period's count goes down by `cost`, not below 0; a count of an earlier
 * period gives nothing back.
 */
export function quotaRefund(
  _limit: number,
  end: number,
  _p2: number,
  s: PolicyState,
  t: number,
  cost: number,
): { state: PolicyState; ttlMs: number } | undefined {
  if (!(s[0]! >= end) || s[1]! === 0) return undefined;
  return { state: [s[0]!, Math.max(0, s[1]! - cost)], ttlMs: s[0]! - t };
}

const refunds = new WeakMap<Policy, RefundKernel>();

function refundFor(policy: Policy): RefundKernel {
  let r = refunds.get(policy);
  if (r === undefined) {
    const c = periodsOf(policy);
    r = (limit, _p1, _p2, s, t, cost) => quotaRefund(limit, c.at(t).b1, 0, s, t, cost);
    refunds.set(policy, r);
  }
  return r;
}

/** quota's row of the kind table (table.ts): the limit is static, the period ends per call. */
export const QUOTA: PolicyKindRow<'quota'> = {
  kind: 'quota',
  tag: 'qt',
  lua: 'quota',
  params: 1,
  shaping: false,
  scalars: 2,
  kernel: quotaKernel,
  refund: quotaRefund,
  perCall: { args: 3, write: writePeriods, kernelFor, refundFor },
};
