import type { Duration } from '../duration.js';
import type { OptionNames } from '../options.js';
import type { Policy } from '../types.js';
import type { PolicyState, Verdict } from './common.js';
import { bucketPolicy, type Named } from './define.js';
import type { PolicyKindRow } from './kinds.js';
import { bucketKernel, bucketRefund } from './token_bucket.js';

/**
 * Options of `leakyBucket`: `limit` requests leave per `interval`, up to `queue` more may wait, and
 * an optional `name`.
 * @example
 * ```ts
 * import { type LeakyBucketOptions, leakyBucket } from '@floodgate/core';
 *
 * const options: LeakyBucketOptions = { limit: 10, interval: '1s', queue: 20, name: 'smooth' };
 * const policy = leakyBucket(options);
 * ```
 * @public
 */
export interface LeakyBucketOptions extends Named {
  /** Requests that leave the bucket per `interval`, evenly spaced. */
  limit: number;
  interval: Duration;
  /** Requests that may wait their turn besides the one leaving now. */
  queue: number;
}

// The factory's option names, which the compiler keeps in step with its options type.
const LEAKY_BUCKET_NAMES = {
  limit: true,
  interval: true,
  queue: true,
  name: true,
  blockFor: true,
  shadow: true,
} as const satisfies OptionNames<LeakyBucketOptions>;

/**
 * Shapes traffic: admitted requests start `interval / limit` apart (see `delayMs`); up to `queue`
 * may wait besides the one starting now, so the largest cost is `queue + 1`. The arithmetic is
 * the token bucket's (token_bucket.ts `bucketKernel` with `shaping`).
 * @example
 * Admitted requests report `delayMs`: wait that long before doing the work.
 * ```ts
 * import { createLimiter, leakyBucket } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 * import { setTimeout as sleep } from 'node:timers/promises';
 *
 * const policy = leakyBucket({ limit: 10, interval: '1s', queue: 20 });
 * const limiter = createLimiter({ store: new MemoryStore(), policy });
 * const d = await limiter.limit('job-queue');
 * if (d.allowed) await sleep(d.delayMs);
 * ```
 * @public
 */
export function leakyBucket(options: LeakyBucketOptions): Policy {
  return bucketPolicy(LEAKY_BUCKET, options, 'queue', LEAKY_BUCKET_NAMES);
}

/**
 * `bucketKernel` with `shaping` on, in the signature of every kind's kernel.
 * @example
 * The second request at the same instant is admitted with a wait of `interval / limit`.
 * ```ts
 * import { leakyBucket } from '@floodgate/core';
 * import { leakyBucketKernel, newVerdict } from '@floodgate/core/internal';
 *
 * const [capacity, perUnit, perMs] = leakyBucket({ limit: 10, interval: '1s', queue: 5 }).params;
 * const v = newVerdict();
 * leakyBucketKernel(capacity, perUnit, perMs, false, 0, 0, 0, undefined, 1_000, 1, v);
 * leakyBucketKernel(capacity, perUnit, perMs, true, v.n0, v.n1, v.n2, undefined, 1_000, 1, v);
 * console.log(v.delayMs); // 100
 * ```
 * @internal
 */
export function leakyBucketKernel(
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
  bucketKernel(true, capacity, perUnit, perMs, has, s0, s1, s2, t, cost, v);
}

/** leakyBucket's row of the kind table (table.ts): token_bucket.lua's fragment, shaping. */
export const LEAKY_BUCKET: PolicyKindRow<'leakyBucket'> = {
  kind: 'leakyBucket',
  tag: 'lb',
  lua: 'leaky_bucket',
  params: 4,
  overrideParams: 3,
  shaping: true,
  scalars: 3,
  kernel: leakyBucketKernel,
  refund: bucketRefund,
};
