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
 */
export function tokenBucket(options: TokenBucketOptions): Policy {
  return bucketPolicy(TOKEN_BUCKET, options, 'burst', TOKEN_BUCKET_NAMES);
}

/**
 * The reference for both buckets (token_bucket.lua mirrors it), writing into `v`: GCRA over the
 * theoretical arrival time, params `[capacity, ticksPerUnit, ticksPerMs]` (define.ts
 * `bucketPolicy`), state `[tatMs, tatTicks]` as `s0`, `s1`. `shaping` (leakyBucket) reports the
 * wait as delay. The kind table runs it as `tokenBucketKernel` and `leakyBucketKernel`.
 * @example
 * A leaky bucket's second request waits `interval / limit` (`delayMs`); `params` feed the kernel.
 * ```ts
 * import { leakyBucket } from '@floodgate/core';
 * import { bucketKernel, newVerdict } from '@floodgate/core/internal';
 *
 * const [capacity, perUnit, perMs] = leakyBucket({ limit: 10, interval: '1s', queue: 5 }).params;
 * const v = newVerdict();
 * bucketKernel(true, capacity, perUnit, perMs, false, 0, 0, 1_000, 1, v);
 * bucketKernel(true, capacity, perUnit, perMs, true, v.n0, v.n1, 1_000, 1, v);
 * console.log(v.delayMs); // 100
 * ```
 */
export function bucketKernel(
  shaping: boolean,
  capacity: number,
  perUnit: number,
  perMs: number,
  has: boolean,
  s0: number,
  s1: number,
  t: number,
  cost: number,
  v: Verdict,
): void {
  const tau = capacity * perUnit;
  let now = t;
  let ahead = 0; // ticks the theoretical arrival time is ahead of now
  if (has) {
    const maxAheadMs = ceilDiv(tau, perMs);
    if (s0 - now > maxAheadMs) now = s0 - maxAheadMs;
    ahead = Math.max(0, (s0 - now) * perMs + s1);
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
 * tokenBucketKernel(capacity, perUnit, perMs, true, v.n0, v.n1, 0, undefined, 0, 1, v);
 * console.log(v.allowed, v.retryAfterMs); // false 500
 * ```
 */
export function tokenBucketKernel(
  capacity: number,
  perUnit: number,
  perMs: number,
  has: boolean,
  s0: number,
  s1: number,
  _s2: number,
  _log: PolicyState | undefined,
  t: number,
  cost: number,
  v: Verdict,
): void {
  bucketKernel(false, capacity, perUnit, perMs, has, s0, s1, t, cost, v);
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
  const maxAheadMs = ceilDiv(tau, perMs);
  if (s[0]! - now > maxAheadMs) now = s[0]! - maxAheadMs;
  const ahead = Math.max(0, (s[0]! - now) * perMs + s[1]!);
  if (ahead === 0) return undefined;
  const after = Math.max(0, ahead - cost * perUnit);
  if (after === 0) return null;
  const whole = floorDiv(after, perMs);
  return { state: [now + whole, after - whole * perMs], ttlMs: ceilDiv(after, perMs) + now - t };
}

/** tokenBucket's row of the kind table (table.ts). */
export const TOKEN_BUCKET: PolicyKindRow<'tokenBucket'> = {
  kind: 'tokenBucket',
  tag: 'tb',
  lua: 'token_bucket',
  params: 3,
  shaping: false,
  scalars: 2,
  kernel: tokenBucketKernel,
  refund: bucketRefund,
};
