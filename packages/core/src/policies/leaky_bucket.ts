import type { Duration } from '../duration.js';
import type { Policy } from '../types.js';
import { checkKeys, type Named, positiveInt } from './define.js';
import { bucketPolicy } from './token_bucket.js';

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
 */
export interface LeakyBucketOptions extends Named {
  /** Requests that leave the bucket per `interval`, evenly spaced. */
  limit: number;
  interval: Duration;
  /** Requests that may wait their turn besides the one leaving now. */
  queue: number;
}

/**
 * Shapes traffic: admitted requests start `interval / limit` apart (see `delayMs`); up to `queue`
 * may wait besides the one starting now, so the largest cost is `queue + 1`. The arithmetic is
 * the token bucket's (token_bucket.ts `bucketOutcome` with `shaping`).
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
 */
export function leakyBucket(options: LeakyBucketOptions): Policy {
  const o = checkKeys(options, ['limit', 'interval', 'queue', 'name'], 'leakyBucket');
  const queue = positiveInt(o.queue, 'leakyBucket: queue');
  return bucketPolicy('leakyBucket', o, queue + 1);
}
