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
): void {
  const tau = capacity * perUnit;
  let now = t;
  let ahead = 0; // ticks the theoretical arrival time is ahead of now
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
  }
  const shift = now - t;
  const remaining = Math.max(0, floorDiv(tau - ahead, perUnit));
  const reset = ceilDiv(ahead, perMs);
  const after = ahead + cost * perUnit;
  if (after > tau) {
    deny(v, remaining, reset, ceilDiv(after - tau, perMs), shift);
    return;
  }
  const whole = floorDiv(after, perMs);
  admit(v, remaining, reset, shaping ? reset : 0, remaining - cost, ceilDiv(after, perMs), shift);
  v.n0 = now + whole;
  v.n1 = after - whole * perMs;
  v.n2 = perMs;
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
): void {
  bucketKernel(false, capacity, perUnit, perMs, has, s0, s1, s2, t, cost, v);
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
  return {
    state: [now + whole, after - whole * perMs, perMs],
    ttlMs: ceilDiv(after, perMs) + now - t,
  };
}

/** tokenBucket's row of the kind table (table.ts). */
export const TOKEN_BUCKET: PolicyKindRow<'tokenBucket'> = {
  kind: 'tokenBucket',
  tag: 'tb',
  lua: 'token_bucket',
  params: 3,
  shaping: false,
  scalars: 3,
  kernel: tokenBucketKernel,
  refund: bucketRefund,
};
