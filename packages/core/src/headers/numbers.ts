/**
 * The largest Integer a Structured Field can carry (RFC 9651 §3.3.1). Every count and delta we
 * emit is clamped to it, so serialising never throws on an absurd input mid-request.
 */
export const MAX_SF_INTEGER = 999_999_999_999_999;

/** A whole, non-negative count fit for a header: NaN and negatives become 0. */
export function toCount(value: number): number {
  if (!(value > 0)) return 0;
  return Math.min(Math.floor(value), MAX_SF_INTEGER);
}

/**
 * Milliseconds to delta-seconds, rounded up: rounding down would tell a client to come back
 * before the limiter can admit it, which turns one 429 into two.
 */
export function msToSeconds(ms: number): number {
  if (!(ms > 0)) return 0;
  return Math.min(Math.ceil(ms / 1000), MAX_SF_INTEGER);
}

/** A value read from a header that may stand for a count: a safe, non-negative integer. */
export function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}
