import { checkTimeZone } from '../calendar.js';
import { type Duration, parseDuration, parseInterval } from '../duration.js';
import { FloodgateError } from '../errors.js';
import { checkOptions, type OptionNames } from '../options.js';
import type { Policy } from '../types.js';
import { gcd } from './common.js';
import type { PolicyKindRow } from './kinds.js';
import { buildPolicy } from './policy.js';

// A factory hands its options here once, with its kind's row: they are checked and turned into
// the kind's parameters on this one visit, then handed down to buildPolicy (policy.ts), and the
// stores read `Policy.params` through the kind table. An option is read in one place.

export interface Named {
  /** Shown in headers and problem bodies. @default e.g. `'100-per-1m'` */
  name?: string;
  /**
   * A penalty: when this policy denies a `limit()` call, the identity is blocked for this long.
   * While blocked, every decision of a limiter with this policy is denied with `retryAfterMs` =
   * the time left on the block, and charges nothing. The block lives in the store (shared by
   * every process); `limiter.reset(identity)` lifts it. @default no block
   */
  blockFor?: Duration;
  /**
   * Report this policy's denials instead of enforcing them (`Decision.shadowDenied`); the policy
   * keeps its id and state. @default false
   */
  shadow?: boolean;
}

/** The `blockFor` option in ms, or undefined. */
function blockForOf(o: Record<string, unknown>, kind: string): number | undefined {
  if (o.blockFor === undefined) return undefined;
  return parseDuration(o.blockFor, `${kind}: blockFor`);
}

export interface WindowOptions extends Named {
  /** Units admitted per window. */
  limit: number;
  /** Window length; windows are aligned to the epoch. */
  window: Duration;
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

const WINDOW_NAMES = {
  limit: true,
  window: true,
  name: true,
  blockFor: true,
  shadow: true,
} as const satisfies OptionNames<WindowOptions>;

function checkKeys(
  options: unknown,
  allowed: Readonly<Record<string, true>>,
  factory: string,
): Record<string, unknown> {
  if (typeof options !== 'object' || options === null) {
    throw new FloodgateError('INVALID_POLICY', `${factory}: options object required`);
  }
  checkOptions(factory, options, allowed, { code: 'INVALID_POLICY' });
  return options as Record<string, unknown>;
}

/** The policy with `shadow: true` when asked; the id stays: both copies share their state. */
function shadowed(policy: Policy, shadow: unknown): Policy {
  if (shadow !== undefined && typeof shadow !== 'boolean') {
    throw new FloodgateError('INVALID_POLICY', `${policy.kind}: shadow must be true or false`);
  }
  return shadow === true ? Object.freeze({ ...policy, shadow: true }) : policy;
}

/** fixedWindow, slidingWindow and slidingWindowLog: `{ limit, window }`, params `[limit, windowMs, 0]`. */
export function windowPolicy(row: PolicyKindRow, options: unknown): Policy {
  const kind = row.kind;
  const o = checkKeys(options, WINDOW_NAMES, kind);
  const limit = positiveInt(o.limit, `${kind}: limit`);
  const windowMs = parseInterval(o.window, `${kind}: window`);
  // The sliding counter compares limit × window in integers; all three must stay exact.
  if (!Number.isSafeInteger(limit * windowMs * 2)) {
    throw new FloodgateError(
      'INVALID_POLICY',
      `${kind}: limit × window is too large to count exactly`,
    );
  }
  return shadowed(
    buildPolicy(
      row,
      o.name,
      limit,
      windowMs,
      limit,
      [limit, windowMs, 0],
      undefined,
      blockForOf(o, kind),
    ),
    o.shadow,
  );
}

/**
 * tokenBucket and leakyBucket: `{ limit, interval }` and the option that sizes the bucket
 * (`burst`, default `limit`; or `queue`, which waits besides the one request leaving now).
 * Params `[capacity, ticksPerUnit, ticksPerMs]`: buckets count in ticks, one unit of cost =
 * `interval / gcd` ticks and one ms = `limit / gcd` ticks, so a refill rate such as 7 per minute
 * stays exact without fractions (token_bucket.ts runs them).
 */
export function bucketPolicy(
  row: PolicyKindRow,
  options: unknown,
  sizedBy: 'burst' | 'queue',
  names: Readonly<Record<string, true>>,
): Policy {
  const kind = row.kind;
  const o = checkKeys(options, names, kind);
  const capacity =
    sizedBy === 'queue'
      ? positiveInt(o.queue, `${kind}: queue`) + 1
      : o.burst === undefined
        ? positiveInt(o.limit, `${kind}: limit`)
        : positiveInt(o.burst, `${kind}: burst`);
  const limit = positiveInt(o.limit, `${kind}: limit`);
  const windowMs = parseInterval(o.interval, `${kind}: interval`);
  const g = gcd(windowMs, limit);
  const ticksPerUnit = windowMs / g;
  const ticksPerMs = limit / g;
  // The fourth parameter: the bucket's fill time were its burst its limit, in ticks (the
  // interval in ticks), which a token bucket's short state form stands for (token_bucket.ts
  // fillShift; a leaky bucket, which keeps its queue's start times, does not read it).
  const fillAtLimit = limit * ticksPerUnit;
  if (
    !Number.isSafeInteger(capacity * ticksPerUnit * 2 + ticksPerMs) ||
    !Number.isSafeInteger(fillAtLimit * 2)
  ) {
    throw new FloodgateError(
      'INVALID_POLICY',
      `${kind}: capacity × interval is too large to count exactly`,
    );
  }
  return shadowed(
    buildPolicy(
      row,
      o.name,
      limit,
      windowMs,
      capacity,
      [capacity, ticksPerUnit, ticksPerMs, fillAtLimit],
      undefined,
      blockForOf(o, kind),
    ),
    o.shadow,
  );
}

// A period's nominal length, what headers advertise as its window (`w`); the reset is exact.
const NOMINAL_MS = { day: 86_400_000, week: 604_800_000, month: 2_592_000_000 } as const;

/**
 * quota: `{ limit, per, timeZone = 'UTC' }`, params `[limit, 0, 0]` and the `calendar`; the
 * period's boundaries are not parameters of the policy but of each call (quota.ts).
 */
export function calendarPolicy(
  row: PolicyKindRow,
  options: unknown,
  names: Readonly<Record<string, true>>,
): Policy {
  const kind = row.kind;
  const o = checkKeys(options, names, kind);
  const limit = positiveInt(o.limit, `${kind}: limit`);
  const per = o.per;
  if (per !== 'day' && per !== 'week' && per !== 'month') {
    throw new FloodgateError(
      'INVALID_POLICY',
      `${kind}: per must be 'day', 'week' or 'month', got ${String(per)}`,
    );
  }
  const timeZone =
    o.timeZone === undefined ? 'UTC' : checkTimeZone(o.timeZone, `${kind}: timeZone`);
  const windowMs = NOMINAL_MS[per];
  return shadowed(
    buildPolicy(
      row,
      o.name,
      limit,
      windowMs,
      limit,
      [limit, 0, 0],
      { per, timeZone },
      blockForOf(o, kind),
    ),
    o.shadow,
  );
}
