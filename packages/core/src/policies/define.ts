import { type Duration, parseDuration } from '../duration.js';
import { FloodgateError } from '../errors.js';
import { sha256Base64url } from '../hash.js';
import type { Policy } from '../types.js';
import { gcd } from './common.js';
import type { PolicyKindRow } from './kinds.js';

// A factory hands its options here once, with its kind's row: the checks, the durations, the
// parameters and the frozen Policy are all made on this one visit, so an option is read in one
// place on its way to the stores (which read `Policy.params` through the kind table).

export interface Named {
  /** Shown in headers and problem bodies. @default e.g. `'100-per-1m'` */
  name?: string;
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

/**
 * The key suffix: the kind's tag and 30 bits of a hash of the parameters the algorithm runs on
 * (`tb:Xk3_9`), so keys stay short whatever the limits: with a 7-character identity and the
 * default prefix the key fits 28 bytes (Redis's 32-byte allocation class). Equal parameters give
 * equal ids (two limiters with one policy share its state); changed parameters give a new key,
 * and the old state is never read under the new parameters: it expires on its own TTL, within
 * one window or refill interval. Two distinct policies of one kind under one prefix collide with
 * odds of 2^-30.
 */
function policyId(row: PolicyKindRow, params: readonly number[]): string {
  const hash = sha256Base64url(`${row.kind}:${params.join(':')}`);
  return `${row.tag}:${hash.slice(0, 5)}`;
}

function make(
  row: PolicyKindRow,
  o: Record<string, unknown>,
  limit: number,
  windowMs: number,
  capacity: number,
  params: [number, number, number],
): Policy {
  const kind = row.kind;
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
    id: policyId(row, params),
    limit,
    windowMs,
    capacity,
    params: Object.freeze(params),
  });
}

/** fixedWindow, slidingWindow and slidingWindowLog: `{ limit, window }`, params `[limit, windowMs, 0]`. */
export function windowPolicy(row: PolicyKindRow, options: unknown): Policy {
  const kind = row.kind;
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
  return make(row, o, limit, windowMs, limit, [limit, windowMs, 0]);
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
): Policy {
  const kind = row.kind;
  const o = checkKeys(options, ['limit', 'interval', sizedBy, 'name'], kind);
  const capacity =
    sizedBy === 'queue'
      ? positiveInt(o.queue, `${kind}: queue`) + 1
      : o.burst === undefined
        ? positiveInt(o.limit, `${kind}: limit`)
        : positiveInt(o.burst, `${kind}: burst`);
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
  return make(row, o, limit, windowMs, capacity, [capacity, ticksPerUnit, ticksPerMs]);
}
