import { parseHttpDate } from './http-date.js';
import { MAX_SF_INTEGER, msToSeconds } from './numbers.js';

/** Bounds the jitter span so `Infinity` cannot turn into `NaN` (0 × Infinity) below. */
const MAX_JITTER_MS = MAX_SF_INTEGER * 1000;

/**
 * `Retry-After` as delay-seconds. The wait is rounded up and jitter is only ever added on top,
 * so the advertised time is never earlier than the moment the limiter admits the request again.
 */
export function formatRetryAfter(
  retryAfterMs: number,
  jitterMs = 0,
  random: () => number = Math.random,
): string {
  const base = Math.max(retryAfterMs, 0);
  let extra = 0;
  if (jitterMs > 0) {
    const r = random();
    // Clamped to [0, 1]: a misbehaving random source may lengthen the wait, never shorten it.
    const u = r > 0 ? Math.min(r, 1) : 0;
    extra = u * Math.min(jitterMs, MAX_JITTER_MS);
  }
  return String(msToSeconds(base + extra));
}

const OWS = /^[ \t]+|[ \t]+$/g;
const DELAY_SECONDS = /^\d+$/;

/**
 * The delay a `Retry-After` value asks for, in ms: delay-seconds or any of the three RFC 9110
 * HTTP-date forms. A date in the past means "now" (0). Anything unreadable is `undefined`, so a
 * caller falls back to its next source of truth instead of guessing.
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
