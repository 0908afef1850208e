import type { Duration } from '../duration.js';
import { parseDuration } from '../duration.js';
import { FloodgateError } from '../errors.js';
import type { Policy } from '../types.js';
import {
  ceilDiv,
  floorDiv,
  gcd,
  late,
  outcome,
  type PolicyOutcome,
  type PolicyState,
} from './common.js';
import { checkKeys, make, type Named, positiveInt } from './define.js';

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
 * const policy = tokenBucket({ limit: 100, interval: '1m', burst: 20 });
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
 * The reference for both buckets (token_bucket.lua mirrors it): GCRA over the theoretical
 * arrival time, state `[tatMs, tatTicks]`. `shaping` (leakyBucket) reports the wait as delay.
 */
export function bucketOutcome(
  shaping: boolean,
  p: Policy['params'],
  s: PolicyState | undefined,
  t: number,
  cost: number,
): PolicyOutcome {
  const [capacity, perUnit, perMs] = p;
  const tau = capacity * perUnit;
  let now = t;
  let ahead = 0; // ticks the theoretical arrival time is ahead of now
  if (s !== undefined) {
    const maxAheadMs = ceilDiv(tau, perMs);
    if (s[0]! - now > maxAheadMs) now = s[0]! - maxAheadMs;
    ahead = Math.max(0, (s[0]! - now) * perMs + s[1]!);
  }
  const shift = now - t;
  const remaining = Math.max(0, floorDiv(tau - ahead, perUnit));
  const reset = ceilDiv(ahead, perMs);
  const after = ahead + cost * perUnit;
  if (after > tau) {
    const retry = ceilDiv(after - tau, perMs);
    return late(outcome(false, remaining, reset, retry, 0, undefined, 0, 0), shift);
  }
  const whole = floorDiv(after, perMs);
  const next = [now + whole, after - whole * perMs];
  const delay = shaping ? reset : 0;
  return late(
    outcome(true, remaining, reset, 0, delay, next, remaining - cost, ceilDiv(after, perMs)),
    shift,
  );
}
