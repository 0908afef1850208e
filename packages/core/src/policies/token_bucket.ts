import type { Duration } from '../duration.js';
import { parseDuration } from '../duration.js';
import { FloodgateError } from '../errors.js';
import type { Policy } from '../types.js';
import {
  admit,
  ceilDiv,
  deny,
  floorDiv,
  gcd,
  newVerdict,
  type PolicyOutcome,
  type PolicyState,
  toOutcome,
  type Verdict,
} from './common.js';
import { checkKeys, make, type Named, positiveInt } from './define.js';

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

// Buckets count in ticks: one unit of cost = `interval / gcd` ticks and one ms = `limit / gcd`
// ticks, so a refill rate such as 7 per minute stays exact without fractions.
export function bucketPolicy(
  kind: 'tokenBucket' | 'leakyBucket',
  o: Record<string, unknown>,
  capacity: number,
): Policy {
  const limit = positiveInt(o.limit, `${kind}: limit`);
  const windowMs = parseDuration(o.interval, `${kind}: interval`);
  const g = gcd(windowMs, limit);
  const ticksPerUnit = windowMs / g;
  const ticksPerMs = limit / g;
  if (!Number.isSafeInteger(capacity * ticksPerUnit * 2 + ticksPerMs)) {
    throw new FloodgateError(
      'INVALID_POLICY',
      `${kind}: capacity × interval is too large to count exactly`,
    );
  }
  return make(kind, o, limit, windowMs, capacity, [capacity, ticksPerUnit, ticksPerMs]);
}

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
  const o = checkKeys(options, ['limit', 'interval', 'burst', 'name'], 'tokenBucket');
  const burst =
    o.burst === undefined
      ? positiveInt(o.limit, 'tokenBucket: limit')
      : positiveInt(o.burst, 'tokenBucket: burst');
  return bucketPolicy('tokenBucket', o, burst);
}

/**
 * The reference for both buckets (token_bucket.lua mirrors it), writing into `v`: GCRA over the
 * theoretical arrival time, state `[tatMs, tatTicks]` as `s0`, `s1`. `shaping` (leakyBucket)
 * reports the wait as delay.
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

/** `bucketKernel` on an array state. */
export function bucketOutcome(
  shaping: boolean,
  p: Policy['params'],
  s: PolicyState | undefined,
  t: number,
  cost: number,
): PolicyOutcome {
  const v = newVerdict();
  bucketKernel(shaping, p[0], p[1], p[2], s !== undefined, s?.[0] ?? 0, s?.[1] ?? 0, t, cost, v);
  return toOutcome(v, 2);
}
