import { parseRateLimitHeaders, parseRetryAfter } from '@floodgate/core/headers';

/**
 * Where a wait came from, best first.
 * @example
 * ```ts
 * import { type DelaySource, serverDelay } from '@floodgate/client';
 *
 * declare const response: Response;
 * const source: DelaySource = serverDelay(response.headers)?.source ?? 'backoff';
 * ```
 * @public
 */
export type DelaySource =
  | 'retry-after-ms'
  | 'retry-after'
  | 'openai-ratelimit'
  | 'anthropic-ratelimit'
  | 'ratelimit-draft-8'
  | 'ratelimit-draft-7'
  | 'ratelimit-draft-6'
  | 'x-ratelimit-reset'
  | 'retry-later'
  | 'backoff';

/**
 * The wait a response asked for, in ms, and which header said so.
 * @example
 * ```ts
 * import { type ServerDelay, serverDelay } from '@floodgate/client';
 *
 * function describe(delay: ServerDelay | undefined): string {
 *   return delay === undefined ? 'no delay given' : `wait ${delay.delayMs} ms (${delay.source})`;
 * }
 * describe(serverDelay(new Headers({ 'retry-after': '3' }))); // 'wait 3000 ms (retry-after)'
 * ```
 * @public
 */
export interface ServerDelay {
  readonly delayMs: number;
  readonly source: DelaySource;
}

/**
 * Reads the wait a refused response asks for: `headers` are the response's, `localNow` this
 * machine's clock. {@link serverDelay} is the default; `modelApiDelay` (from
 * `@floodgate/client/model-apis`) also reads model APIs' headers.
 * @example
 * A reader for an API that states its wait in a header of its own, before the standard ones.
 * ```ts
 * import { type ServerDelayReader, serverDelay, withRetry } from '@floodgate/client';
 *
 * const reader: ServerDelayReader = (headers, localNow) => {
 *   const seconds = Number(headers.get('x-wait-seconds') ?? Number.NaN);
 *   if (seconds >= 0) return { delayMs: seconds * 1000, source: 'retry-after' };
 *   return serverDelay(headers, localNow);
 * };
 * const api = withRetry(fetch, { serverDelay: reader });
 * ```
 * @beta
 */
export type ServerDelayReader = (headers: Headers, localNow: number) => ServerDelay | undefined;

/** A timestamp this large is epoch milliseconds (Sep 2001 onwards), not epoch seconds. */
const EPOCH_MS_THRESHOLD = 1e12;
const LONG_DIGITS = /^[ \t]*(\d{13,15})[ \t]*$/;
/** Only a value with a clock time in it can be an HTTP-date; `Date: 5` is not. */
const HAS_TIME = /\d{2}:\d{2}:\d{2}/;
/** Parsing the `Date` header against a clock ten years back keeps its sign (see below). */
const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000;

/**
 * The wait a response asks for, by the documented precedence: `Retry-After` > `RateLimit` `t`
 * (draft-8) > `RateLimit` `reset` (draft-7) > `RateLimit-Reset` (draft-6) > `X-RateLimit-Reset`.
 * Each source is read on its own, so a malformed one falls through to the next instead of
 * hiding it. Never throws. `localNow` is this machine's clock; a `Date` header, when sent, sets
 * the server's.
 * @example
 * ```ts
 * import { serverDelay } from '@floodgate/client';
 *
 * serverDelay(new Headers({ 'retry-after': '3' })); // { delayMs: 3000, source: 'retry-after' }
 * serverDelay(new Headers({ ratelimit: '"api";r=0;t=12' })); // { delayMs: 12000, source: 'ratelimit-draft-8' }
 * serverDelay(new Headers()); // undefined
 * ```
 * @public
 */
export function serverDelay(
  headers: Headers,
  localNow: number = Date.now(),
): ServerDelay | undefined {
  const now = serverNow(headers, localNow) ?? localNow;

  const retryAfter = parseRetryAfter(headers.get('retry-after'), now);
  if (retryAfter !== undefined) return { delayMs: retryAfter, source: 'retry-after' };

  const rateLimit = headers.get('ratelimit');
  if (rateLimit !== null) {
    const fields: Record<string, string> = { ratelimit: rateLimit };
    const policy = headers.get('ratelimit-policy');
    if (policy !== null) fields['ratelimit-policy'] = policy;
    // With several draft-8 policies, core reports the one closest to running out and, among
    // exhausted ones, the longest reset: the request passes only once all of them have reset.
    const parsed = parseRateLimitHeaders(fields, now);
    if (parsed?.resetSeconds !== undefined) {
      if (parsed.source === 'draft-8' || parsed.source === 'draft-7') {
        return { delayMs: parsed.resetSeconds * 1000, source: `ratelimit-${parsed.source}` };
      }
    }
  }

  const draft6 = headers.get('ratelimit-reset');
  if (draft6 !== null) {
    const parsed = parseRateLimitHeaders({ 'ratelimit-reset': draft6 }, now);
    if (parsed?.source === 'draft-6' && parsed.resetSeconds !== undefined) {
      return { delayMs: parsed.resetSeconds * 1000, source: 'ratelimit-draft-6' };
    }
  }

  const legacy = headers.get('x-ratelimit-reset');
  if (legacy !== null) {
    const ms = legacyResetMs(legacy, now);
    if (ms !== undefined) return { delayMs: ms, source: 'x-ratelimit-reset' };
  }
  return undefined;
}

/**
 * Legacy servers disagree on what `X-RateLimit-Reset` holds. By size: below 1e9 it is
 * delta-seconds, up to 1e12 epoch seconds (GitHub), from 1e12 on epoch milliseconds. No real
 * delta is 30 years long, and no epoch-seconds value reaches 1e12 before the year 33658.
 */
function legacyResetMs(value: string, now: number): number | undefined {
  const long = LONG_DIGITS.exec(value);
  if (long) {
    const at = Number(long[1]);
    return at >= EPOCH_MS_THRESHOLD ? Math.max(0, Math.ceil(at - now)) : undefined;
  }
  const parsed = parseRateLimitHeaders({ 'x-ratelimit-reset': value }, now);
  return parsed?.resetSeconds === undefined ? undefined : parsed.resetSeconds * 1000;
}

/**
 * The server's clock, from its `Date` header: dates in `Retry-After` and epoch resets are read
 * against it, so a client whose clock is off neither hammers nor stalls. Browsers hide `Date`
 * from cross-origin scripts unless the server exposes it; then the local clock stands in.
 */
export function serverNow(headers: Headers, localNow: number): number | undefined {
  const date = headers.get('date');
  if (date === null || !HAS_TIME.test(date)) return undefined;
  // parseRetryAfter clamps past dates to 0; measured from ten years back, a current Date stays
  // positive, and two-digit RFC 850 years still resolve within the same century window.
  const since = parseRetryAfter(date, localNow - TEN_YEARS_MS);
  if (since === undefined || since === 0) return undefined;
  return localNow - TEN_YEARS_MS + since;
}
