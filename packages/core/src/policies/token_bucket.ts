import type { Duration } from '../duration.js';
import type { OptionNames } from '../options.js';
import type { Policy } from '../types.js';
import { admit, ceilDiv, deny, floorDiv, type PolicyState, type Verdict } from './common.js';
import { bucketPolicy, type Named } from './define.js';
import type { PolicyKindRow } from './kinds.js';

/**
 * Options of `tokenBucket`: `limit` tokens refilled per `interval`, held up to `burst`, and an
 * optional `name`.
 * @example
 * ```ts
 * import { type TokenBucketOptions, tokenBucket } from '@floodgate/core';
 *
 * const options: TokenBucketOptions = { limit: 10, interval: '1s', burst: 20, name: 'burst' };
 * const policy = tokenBucket(options);
 * ```
 * @public
 */
export interface TokenBucketOptions extends Named {
  /** Tokens refilled per `interval`. */
  limit: number;
  interval: Duration;
  /** Bucket capacity: the largest burst. @default limit */
  burst?: number;
}

// The factory's option names, which the compiler keeps in step with its options type.
const TOKEN_BUCKET_NAMES = {
  limit: true,
  interval: true,
  burst: true,
  name: true,
  blockFor: true,
  shadow: true,
} as const satisfies OptionNames<TokenBucketOptions>;

/**
 * Refills `limit` tokens per `interval` continuously, up to `burst`; one stored timestamp (GCRA).
 * @example
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const policy = tokenBucket({ limit: 100, interval: '1m', burst: 20 });
 * const limiter = createLimiter({ store: new MemoryStore(), policy });
 * ```
 * @public
 */
export function tokenBucket(options: TokenBucketOptions): Policy {
  return bucketPolicy(TOKEN_BUCKET, options, 'burst', TOKEN_BUCKET_NAMES);
}

/**
 * The reference for both buckets (token_bucket.lua mirrors it), writing into `v`: GCRA over the
 * theoretical arrival time, params `[capacity, ticksPerUnit, ticksPerMs]` (define.ts
 * `bucketPolicy`), state `[tatMs, tatTicks, ticksPerMs]` as `s0`, `s1`, `s2`: the arrival time in
 * ms and ticks below one ms, in the ticks per ms of the policy that wrote it. `shaping`
 * (leakyBucket) reports the wait as delay. The kind table runs it as `tokenBucketKernel` and
 * `leakyBucketKernel`.
 *
 * The arrival time is a time, not a count: a policy whose limit, burst or queue changed reads it
 * as it stands (its sub-ms ticks rescaled, `rescaledTicks`), so how long until the bucket is full (a token bucket) or until the
 * queue's end (a leaky bucket) carries over, and requests already admitted keep their start
 * times (docs/algorithms.md, "Keys, and a limit that changes").
 * @example
 * A leaky bucket's second request waits `interval / limit` (`delayMs`); `params` feed the kernel.
 * ```ts
 * import { leakyBucket } from '@floodgate/core';
 * import { bucketKernel, newVerdict } from '@floodgate/core/internal';
 *
 * const [capacity, perUnit, perMs] = leakyBucket({ limit: 10, interval: '1s', queue: 5 }).params;
 * const v = newVerdict();
 * bucketKernel(true, capacity, perUnit, perMs, false, 0, 0, 0, 1_000, 1, v);
 * bucketKernel(true, capacity, perUnit, perMs, true, v.n0, v.n1, v.n2, 1_000, 1, v);
 * console.log(v.delayMs); // 100
 * ```
 * @internal
 */
export function bucketKernel(
  shaping: boolean,
  capacity: number,
  perUnit: number,
  perMs: number,
  has: boolean,
  s0: number,
  s1: number,
  s2: number,
  t: number,
  cost: number,
  v: Verdict,
  tauI = 0,
  s3 = 0,
): void {
  const tau = capacity * perUnit;
  let now = t;
  let ahead = 0; // ticks the theoretical arrival time is ahead of now
  let extra = 0; // ticks added for a state written at a shorter fill time (fillShift)
  if (has) {
    let tat = s0;
    let ticks = s1;
    // Ticks of another rate (the limit changed since the write): in this rate's, rounded up.
    if (ticks > 0 && s2 > 0 && s2 !== perMs) {
      ticks = rescaledTicks(ticks, s2, perMs);
      if (ticks === perMs) {
        tat += 1;
        ticks = 0;
      }
    }
    const maxAheadMs = ceilDiv(tau, perMs);
    if (tat - now > maxAheadMs) now = tat - maxAheadMs;
    ahead = Math.max(0, (tat - now) * perMs + ticks);
    if (!shaping && ahead > 0) extra = fillShift(tau, tauI > 0 ? tauI : tau, perMs, s2, s3);
  }
  const shift = now - t;
  const held = ahead + extra;
  const remaining = Math.max(0, floorDiv(tau - held, perUnit));
  // The key lives until the arrival time it holds: `extra` is not stored in it.
  const reset = ceilDiv(ahead, perMs);
  const after = held + cost * perUnit;
  // Charged 0 (a per-policy cost), a bucket past full (its state ahead: debt) still denies.
  if ((after > tau || (cost === 0 && shift > 0)) && !v.force) {
    // With `extra`, a wait that would drain the whole stored arrival time ends sooner, when the
    // key expires: an empty bucket holds no trace of the shorter fill time.
    const need = after - tau;
    deny(v, remaining, reset, extra > 0 && need >= ahead ? reset : ceilDiv(need, perMs), shift);
    return;
  }
  const whole = floorDiv(after, perMs);
  admit(v, remaining, reset, shaping ? reset : 0, remaining - cost, ceilDiv(after, perMs), shift);
  v.n0 = now + whole;
  v.n1 = after - whole * perMs;
  v.n2 = perMs;
  // Written with the state only where it differs from what a short form says (the limit's).
  v.n3 = !shaping && tauI > 0 && tau !== tauI ? tau : 0;
}

/**
 * How many ticks a token bucket adds to a state's arrival time when the state was written by a
 * policy that fills sooner than this one (a shorter burst ÷ limit): the difference of the two
 * fill times. Reading the arrival time alone, a bucket switched to a slower refill with a
 * relatively larger burst would find tokens the old policy never had (100/min with burst 20,
 * spent, then 10/min with burst 10, saw 8); with the shift it holds at most what was left, so
 * over any span a fleet admits at most the larger burst plus the faster refill
 * (docs/algorithms.md, "A limit that changes"). The writer's fill time is `s3` in its ticks
 * (`s2` per ms), or, for a state in a short form, the fill time at its limit (`tauI`): what
 * every short form was written with since 1.1. Rounded so the shift is never smaller than
 * exact. token_bucket.lua mirrors it.
 */
export function fillShift(
  tau: number,
  tauI: number,
  perMs: number,
  s2: number,
  s3: number,
): number {
  const w = s3 > 0 ? fillIn(s3, s2, perMs) : tauI;
  return tau > w ? tau - w : 0;
}

/** A fill time of `fromPerMs` ticks to a ms in ticks of `perMs`, rounded down (never longer). */
function fillIn(fill: number, fromPerMs: number, perMs: number): number {
  if (fromPerMs === perMs) return fill;
  const x = fill * perMs;
  return x < 9_007_199_254_740_992 ? floorDiv(x, fromPerMs) : floorDiv(fill, fromPerMs) * perMs;
}

/**
 * `ticks` (below one ms, `fromPerMs` to a ms) in ticks of `perMs` to a ms, rounded up: the arrival
 * time moves later by less than one of the new ticks, never earlier, so a changed limit never
 * admits more than the time it was given. `perMs` itself means a whole ms (the caller carries
 * it). A product past 2^53 (both rates above 9.4e7 ticks per ms) cannot be exact in a double: the
 * ticks then round up to the whole ms, at most 1 ms stricter. token_bucket.lua runs the same
 * steps, so the doubles agree.
 */
export function rescaledTicks(ticks: number, fromPerMs: number, perMs: number): number {
  const x = ticks * perMs;
  return x < 9_007_199_254_740_992 ? ceilDiv(x, fromPerMs) : perMs;
}

/**
 * `bucketKernel` with `shaping` off, in the signature of every kind's kernel.
 * @example
 * A bucket of 2: two requests pass at once, the third waits for a refill.
 * ```ts
 * import { tokenBucket } from '@floodgate/core';
 * import { newVerdict, tokenBucketKernel } from '@floodgate/core/internal';
 *
 * const [capacity, perUnit, perMs] = tokenBucket({ limit: 2, interval: '1s' }).params;
 * const v = newVerdict();
 * tokenBucketKernel(capacity, perUnit, perMs, false, 0, 0, 0, undefined, 0, 2, v);
 * tokenBucketKernel(capacity, perUnit, perMs, true, v.n0, v.n1, v.n2, undefined, 0, 1, v);
 * console.log(v.allowed, v.retryAfterMs); // false 500
 * ```
 * @internal
 */
export function tokenBucketKernel(
  capacity: number,
  perUnit: number,
  perMs: number,
  has: boolean,
  s0: number,
  s1: number,
  s2: number,
  _log: PolicyState | undefined,
  t: number,
  cost: number,
  v: Verdict,
  tauI = 0,
  s3 = 0,
): void {
  bucketKernel(false, capacity, perUnit, perMs, has, s0, s1, s2, t, cost, v, tauI, s3);
}

/**
 * tokenBucket's and leakyBucket's refund (token_bucket.lua's `@refund`): the theoretical arrival
 * time moves back by `cost` units, never before now; a bucket back to full is deleted. GCRA's
 * arrival time grows by each charge and never by more, so taking one charge out moves it back by
 * at most that charge: the refund never leaves the bucket fuller than it would be without it.
 */
export function bucketRefund(
  capacity: number,
  perUnit: number,
  perMs: number,
  s: PolicyState,
  t: number,
  cost: number,
): { state: PolicyState; ttlMs: number } | null | undefined {
  const tau = capacity * perUnit;
  let now = t;
  let tat = s[0]!;
  let ticks = s[1]!;
  const from = s[2] ?? 0;
  // As bucketKernel reads a state of another rate.
  if (ticks > 0 && from > 0 && from !== perMs) {
    ticks = rescaledTicks(ticks, from, perMs);
    if (ticks === perMs) {
      tat += 1;
      ticks = 0;
    }
  }
  const maxAheadMs = ceilDiv(tau, perMs);
  if (tat - now > maxAheadMs) now = tat - maxAheadMs;
  const ahead = Math.max(0, (tat - now) * perMs + ticks);
  if (ahead === 0) return undefined;
  const after = Math.max(0, ahead - cost * perUnit);
  if (after === 0) return null;
  const whole = floorDiv(after, perMs);
  // A state that carries its writer's fill time keeps it (in this rate's ticks, fillShift's
  // rounding): the refund gives back a charge, not the shift a later reader owes that writer.
  const fill = s[3] ?? 0;
  const kept = fill === 0 ? 0 : Math.max(1, fillIn(fill, from, perMs));
  return {
    state:
      kept === 0
        ? [now + whole, after - whole * perMs, perMs]
        : [now + whole, after - whole * perMs, perMs, kept],
    ttlMs: ceilDiv(after, perMs) + now - t,
  };
}

/** tokenBucket's row of the kind table (table.ts). */
export const TOKEN_BUCKET: PolicyKindRow<'tokenBucket'> = {
  kind: 'tokenBucket',
  tag: 'tb',
  lua: 'token_bucket',
  params: 4,
  overrideParams: 3,
  shaping: false,
  scalars: 4,
  kernel: tokenBucketKernel,
  refund: bucketRefund,
};
