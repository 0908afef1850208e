import { type Duration, parseDuration } from '../duration.js';
import { FloodgateError } from '../errors.js';
import { gcd } from '../math.js';
import type { Policy, PolicyKind } from '../types.js';

interface Named {
  /** Shown in headers and problem bodies. @default e.g. `'100-per-1m'` */
  name?: string;
}
export interface FixedWindowOptions extends Named {
  /** Units admitted per window. */
  limit: number;
  /** Window length; windows are aligned to the epoch. */
  window: Duration;
}
export type SlidingWindowOptions = FixedWindowOptions;
export type SlidingWindowLogOptions = FixedWindowOptions;
export interface TokenBucketOptions extends Named {
  /** Tokens refilled per `interval`. */
  limit: number;
  interval: Duration;
  /** Bucket capacity: the largest burst. @default limit */
  burst?: number;
}
export interface LeakyBucketOptions extends Named {
  /** Requests that leave the bucket per `interval`, evenly spaced. */
  limit: number;
  interval: Duration;
  /** Requests that may wait their turn besides the one leaving now. */
  queue: number;
}

function positiveInt(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new FloodgateError(
      'INVALID_POLICY',
      `${what} must be a positive safe integer, got ${String(value)}`,
    );
  }
  return value;
}

function checkKeys(
  options: unknown,
  allowed: readonly string[],
  factory: string,
): Record<string, unknown> {
  if (typeof options !== 'object' || options === null) {
    throw new FloodgateError('INVALID_POLICY', `${factory}: options object required`);
  }
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key))
      throw new FloodgateError('INVALID_POLICY', `${factory}: unknown option "${key}"`);
  }
  return options as Record<string, unknown>;
}

// Structured Field strings carry printable ASCII only; a name is also used in problem bodies.
const NAME = /^[\x20-\x7e]{1,64}$/;

function shortDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

function make(
  kind: PolicyKind,
  o: Record<string, unknown>,
  limit: number,
  windowMs: number,
  capacity: number,
  params: [number, number, number],
  id: string,
): Policy {
  let name = `${limit}-per-${shortDuration(windowMs)}`;
  if (o.name !== undefined) {
    if (typeof o.name !== 'string' || !NAME.test(o.name)) {
      throw new FloodgateError(
        'INVALID_POLICY',
        `${kind}: name must be 1-64 printable ASCII characters`,
      );
    }
    name = o.name;
  }
  for (const p of params) {
    if (!Number.isSafeInteger(p)) {
      throw new FloodgateError(
        'INVALID_POLICY',
        `${kind}: limit × window is too large to count exactly`,
      );
    }
  }
  return Object.freeze({
    kind,
    name,
    id,
    limit,
    windowMs,
    capacity,
    params: Object.freeze(params),
  });
}

function windowPolicy(kind: PolicyKind, tag: string, options: unknown): Policy {
  const o = checkKeys(options, ['limit', 'window', 'name'], kind);
  const limit = positiveInt(o.limit, `${kind}: limit`);
  const windowMs = parseDuration(o.window, `${kind}: window`);
  // The sliding counter compares limit × window in integers; all three must stay exact.
  if (!Number.isSafeInteger(limit * windowMs * 2)) {
    throw new FloodgateError(
      'INVALID_POLICY',
      `${kind}: limit × window is too large to count exactly`,
    );
  }
  return make(kind, o, limit, windowMs, limit, [limit, windowMs, 0], `${tag}:${limit}:${windowMs}`);
}

/** Counts per epoch-aligned window. Cheapest; admits up to 2 × limit across a window seam. */
export function fixedWindow(options: FixedWindowOptions): Policy {
  return windowPolicy('fixedWindow', 'fw', options);
}

/** Two-counter approximation of a sliding window: weights the previous window by its overlap. */
export function slidingWindow(options: SlidingWindowOptions): Policy {
  return windowPolicy('slidingWindow', 'sw', options);
}

/**
 * The largest `limit` a slidingWindowLog takes. The log holds up to `limit` entries per identity
 * (one per admitted request), and a decision after a quiet spell trims every expired one in one
 * atomic script: at 10 000 entries that is a few ms of Redis time and about 1 MB per identity at
 * worst. Beyond that the exact log costs more than it is worth: use `slidingWindow`.
 */
export const MAX_LOG_LIMIT = 10_000;

/**
 * Exact sliding window: one log entry per admitted request (with its cost); memory grows with
 * the requests in a window, so `limit` is at most `MAX_LOG_LIMIT`.
 */
export function slidingWindowLog(options: SlidingWindowLogOptions): Policy {
  const p = windowPolicy('slidingWindowLog', 'swl', options);
  if (p.limit > MAX_LOG_LIMIT) {
    throw new FloodgateError(
      'INVALID_POLICY',
      `slidingWindowLog: limit ${p.limit} is above ${MAX_LOG_LIMIT}, more entries than an exact log serves in bounded time; use slidingWindow (the two-counter approximation) for large limits`,
    );
  }
  return p;
}

// Buckets count in ticks: one unit of cost = `interval / gcd` ticks and one ms = `limit / gcd`
// ticks, so a refill rate such as 7 per minute stays exact without fractions.
function bucket(
  kind: 'tokenBucket' | 'leakyBucket',
  tag: string,
  o: Record<string, unknown>,
  capacity: number,
  extra: number,
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
  return make(
    kind,
    o,
    limit,
    windowMs,
    capacity,
    [capacity, ticksPerUnit, ticksPerMs],
    `${tag}:${limit}:${windowMs}:${extra}`,
  );
}

/** Refills `limit` tokens per `interval` continuously, up to `burst`; one stored timestamp (GCRA). */
export function tokenBucket(options: TokenBucketOptions): Policy {
  const o = checkKeys(options, ['limit', 'interval', 'burst', 'name'], 'tokenBucket');
  const burst =
    o.burst === undefined
      ? positiveInt(o.limit, 'tokenBucket: limit')
      : positiveInt(o.burst, 'tokenBucket: burst');
  return bucket('tokenBucket', 'tb', o, burst, burst);
}

/**
 * Shapes traffic: admitted requests start `interval / limit` apart (see `delayMs`); up to `queue`
 * may wait besides the one starting now, so the largest cost is `queue + 1`.
 */
export function leakyBucket(options: LeakyBucketOptions): Policy {
  const o = checkKeys(options, ['limit', 'interval', 'queue', 'name'], 'leakyBucket');
  const queue = positiveInt(o.queue, 'leakyBucket: queue');
  return bucket('leakyBucket', 'lb', o, queue + 1, queue);
}
