import { FloodgateError } from './errors.js';
import { warnOnce } from './warn.js';

/**
 * Milliseconds, or a string such as `'500ms'`, `'30s'`, `'1m'`, `'1h'`, `'1d'`.
 * @example
 * A setting typed with it, passed on to a policy factory.
 * ```ts
 * import { type Duration, slidingWindow } from '@floodgate/core';
 *
 * const window: Duration = '30s'; // or 30_000
 * const policy = slidingWindow({ limit: 20, window });
 * ```
 * @public
 */
export type Duration = number | `${number}${DurationUnit}` | `${number} ${DurationUnit}`;
type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd';

const UNIT_MS: Record<DurationUnit, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};
// Digits with an optional fraction, then one unit; signs and exponents are refused on purpose.
const PATTERN = /^(\d+(?:\.\d+)?) ?(ms|s|m|h|d)$/;
// Said in the error for a string that is no duration, so the fix is in the message.
const GRAMMAR =
  "write a number of ms, or a number and one unit: 'ms', 's', 'm', 'h' or 'd' ('500ms', '30s', '1.5m', '1h', '1d')";

/**
 * Parses a duration to whole, positive milliseconds. `what` names the field in the error, so
 * `tokenBucket({ interval: 'abc' })` says which option was wrong.
 * @example
 * ```ts
 * import { parseDuration } from '@floodgate/core';
 *
 * const ms = parseDuration(process.env.RATE_WINDOW ?? '1.5m', 'RATE_WINDOW'); // 90_000
 * ```
 * @public
 */
export function parseDuration(value: unknown, what: string): number {
  let ms: number;
  if (typeof value === 'number') {
    ms = value;
  } else if (typeof value === 'string') {
    const read = scan(value);
    if (read === undefined)
      throw new FloodgateError(
        'INVALID_POLICY',
        `${what}: cannot read duration ${JSON.stringify(value)}: ${GRAMMAR}`,
      );
    ms = read;
  } else {
    throw new FloodgateError(
      'INVALID_POLICY',
      `${what}: expected ms or a duration string, got ${typeof value}: ${GRAMMAR}`,
    );
  }
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new FloodgateError(
      'INVALID_POLICY',
      `${what}: must be a positive whole number of ms, got ${String(value)}`,
    );
  }
  return ms;
}

/**
 * A policy's window or interval: `parseDuration`, and a bare number under 1000 warns once per
 * process (`SHORT_INTERVAL`). rate-limiter-flexible's `duration` is in seconds, and
 * `interval: 60` written from that habit is 60 ms: a limit 1000 times looser than meant, which
 * nothing else would reveal. A string (`'60ms'`) says the unit was meant and stays silent.
 */
export function parseInterval(value: unknown, what: string): number {
  const ms = parseDuration(value, what);
  if (typeof value === 'number' && ms < 1000) {
    warnOnce(
      'SHORT_INTERVAL',
      `${what}: ${ms} is ${ms} ms. For seconds write '${ms}s'; to keep ms and silence this warning write '${ms}ms'.`,
    );
  }
  return ms;
}

/**
 * The duration string grammar alone, for the packages that read durations with rules of their
 * own (`0` allowed, their own error): whole ms ≥ 0 for `'1.5s'` or `'0ms'`, undefined for what
 * is not a duration string or not a whole, safe number of ms (`'1w'`, `'1e3ms'`, `'0.5ms'`).
 * @internal
 * @example
 * ```ts
 * import { durationStringMs } from '@floodgate/core/internal';
 *
 * durationStringMs('0.017m'); // 1020
 * durationStringMs('1w'); // undefined
 * ```
 */
export function durationStringMs(text: string): number | undefined {
  const ms = scan(text);
  return ms !== undefined && Number.isSafeInteger(ms) ? ms : undefined;
}

/** undefined when `text` does not match the grammar; NaN when its ms are not whole. */
function scan(text: string): number | undefined {
  const m = PATTERN.exec(text.trim());
  return m ? exactMs(m[1]!, UNIT_MS[m[2] as DurationUnit]) : undefined;
}

/**
 * `digits` (such as `'2.3'`) times `unit`, computed on integers so `'2.3h'` is 8 280 000 and not
 * a float a hair off it; NaN when the product is not a whole number of ms (`'1.0005s'`).
 */
function exactMs(digits: string, unit: number): number {
  const dot = digits.indexOf('.');
  if (dot === -1) return Number(digits) * unit;
  const fraction = digits.slice(dot + 1);
  const scaled = BigInt(digits.slice(0, dot) + fraction) * BigInt(unit);
  const scale = 10n ** BigInt(fraction.length);
  return scaled % scale === 0n ? Number(scaled / scale) : Number.NaN;
}
