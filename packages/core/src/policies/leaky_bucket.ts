import type { Duration } from '../duration.js';
import type { Policy } from '../types.js';
import { checkKeys, type Named, positiveInt } from './define.js';
import { bucketPolicy } from './token_bucket.js';

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
 * const policy = leakyBucket({ limit: 10, interval: '1s', queue: 20 });
 */
export function leakyBucket(options: LeakyBucketOptions): Policy {
  const o = checkKeys(options, ['limit', 'interval', 'queue', 'name'], 'leakyBucket');
  const queue = positiveInt(o.queue, 'leakyBucket: queue');
  return bucketPolicy('leakyBucket', o, queue + 1);
}
