import { parseHttpDate } from './http-date.js';
import { MAX_SF_INTEGER, msToSeconds } from './numbers.js';

/** Bounds the jitter span so `Infinity` cannot turn into `NaN` (0 × Infinity) below. */
const MAX_JITTER_MS = MAX_SF_INTEGER * 1000;

/**
 * `Retry-After` as delay-seconds. The wait is rounded up and jitter is only ever added on top,
 * so the advertised time is never earlier than the moment the limiter admits the request again.
 * `jitterMs` is a span `J` (extra uniform in `[0, J]` ms) or a range `[min, max]` (uniform in
 * `[min, max]` ms); a negative bound counts as 0, so no jitter can shorten the wait.
 * @example
 * A 429 whose clients return spread over up to 2 s more than they must wait.
 * ```ts
 * import type { ServerResponse } from 'node:http';
 * import type { Decision } from '@floodgate/core';
 * import { formatRetryAfter } from '@floodgate/core/headers';
 *
 * declare const decision: Decision;
 * declare const res: ServerResponse;
 * res.statusCode = 429;
 * res.setHeader('Retry-After', formatRetryAfter(decision.retryAfterMs, 2_000));
 * // At least 1 s and at most 3 s more than the wait:
 * formatRetryAfter(decision.retryAfterMs, [1_000, 3_000]);
 * ```
 * @public
 */
export function formatRetryAfter(
  retryAfterMs: number,
  jitterMs: number | readonly [min: number, max: number] = 0,
  random: () => number = Math.random,
): string {
  const base = Math.max(retryAfterMs, 0);
  const low = typeof jitterMs === 'number' ? 0 : jitterMs[0];
  const high = typeof jitterMs === 'number' ? jitterMs : jitterMs[1];
  const floor = low > 0 ? Math.min(low, MAX_JITTER_MS) : 0;
  let extra = 0;
  if (high - floor > 0) {
    const r = random();
    // Clamped to [0, 1]: a misbehaving random source may lengthen the wait, never shorten it.
    const u = r > 0 ? Math.min(r, 1) : 0;
    extra = u * Math.min(high - floor, MAX_JITTER_MS);
  }
  return String(msToSeconds(base + floor + extra));
}

const OWS = /^[ \t]+|[ \t]+$/g;
const DELAY_SECONDS = /^\d+$/;

/**
 * The delay a `Retry-After` value asks for, in ms: delay-seconds or any of the three RFC 9110
 * HTTP-date forms. A date in the past means "now" (0). Anything unreadable is `undefined`, so a
 * caller falls back to its next source of truth instead of guessing.
 * @example
 * Waiting as long as a 429 or 503 asks, with a fallback when it does not say.
 * ```ts
 * import { setTimeout as sleep } from 'node:timers/promises';
 * import { parseRetryAfter } from '@floodgate/core/headers';
 *
 * const response = await fetch('https://api.example.com/items');
 * if (response.status === 429 || response.status === 503) {
 *   await sleep(parseRetryAfter(response.headers.get('Retry-After')) ?? 1_000);
 * }
 * ```
 * @public
 */
export function parseRetryAfter(
  value: string | null | undefined,
  now: number = Date.now(),
): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.replace(OWS, '');
  if (DELAY_SECONDS.test(text)) {
    const ms = Number(text) * 1000;
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  if (!Number.isFinite(now)) return undefined;
  const at = parseHttpDate(text, now);
  if (at === undefined) return undefined;
  return Math.max(0, Math.ceil(at - now));
}
