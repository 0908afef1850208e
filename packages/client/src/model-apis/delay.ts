import { parseRetryAfter } from '@floodgate/core/headers';
import { type ServerDelay, serverDelay, serverNow } from '../server-delay.js';
import { readRetryAfterMs } from './formats.js';
import { DIMENSIONS, type ModelRateLimit, parseModelRateLimits } from './read.js';

/**
 * The wait a refused model-API response asks for, for `withRetry`'s `serverDelay` option. The
 * first source that can be read wins:
 *
 * 1. `retry-after-ms` (OpenAI, Azure OpenAI): the most precise, what openai-node reads first.
 * 2. `Retry-After`: seconds or an HTTP-date, read against the response's `Date`.
 * 3. The provider's own reset, `x-ratelimit-reset-*` or `anthropic-ratelimit-*-reset`: of the
 *    limits at 0, the longest reset (the call passes only once all have refilled); when none is
 *    at 0, the reset of the one closest to running out (the call may need more than is left).
 * 4. Everything `serverDelay` (the default reader) reads: `RateLimit` (drafts 6 to 8),
 *    `X-RateLimit-Reset`.
 *
 * A provider's reset is when its limit is *whole* again, which is later than when one call fits;
 * so a `Retry-After` beats it when both are sent. Jitter is added by the retry loop, as for any
 * server delay. Malformed values are skipped; it never throws.
 * @example
 * ```ts
 * import { withRetry } from '@floodgate/client';
 * import { modelApiDelay } from '@floodgate/client/model-apis';
 *
 * const api = withRetry(fetch, { serverDelay: modelApiDelay, methods: ['POST'] });
 * modelApiDelay(new Headers({ 'retry-after-ms': '1500', 'retry-after': '2' }));
 * // { delayMs: 1500, source: 'retry-after-ms' }
 * ```
 * @beta
 */
export function modelApiDelay(
  headers: Headers,
  localNow: number = Date.now(),
): ServerDelay | undefined {
  const ms = readRetryAfterMs(headers.get('retry-after-ms'));
  if (ms !== undefined) return { delayMs: ms, source: 'retry-after-ms' };
  const retryAfter = parseRetryAfter(
    headers.get('retry-after'),
    serverNow(headers, localNow) ?? localNow,
  );
  if (retryAfter !== undefined) return { delayMs: retryAfter, source: 'retry-after' };
  const limits = parseModelRateLimits(headers, localNow);
  if (limits) {
    const reset = bindingReset(DIMENSIONS.map((d) => limits[d]));
    if (reset !== undefined) return { delayMs: reset, source: `${limits.provider}-ratelimit` };
  }
  return serverDelay(headers, localNow);
}

/**
 * Of the limits at 0, the longest reset; else the reset of the one with the smallest share
 * left (the longer reset on a tie). The rule core's parser follows for several RateLimit
 * policies, so that both kinds of header are read alike.
 */
function bindingReset(limits: readonly (ModelRateLimit | undefined)[]): number | undefined {
  let spent: number | undefined;
  let closest: { share: number; resetMs: number } | undefined;
  for (const l of limits) {
    if (l?.remaining === undefined || l.resetMs === undefined) continue;
    if (l.remaining === 0) spent = Math.max(spent ?? 0, l.resetMs);
    if (!l.limit) continue;
    const share = l.remaining / l.limit;
    if (
      !closest ||
      share < closest.share ||
      (share === closest.share && l.resetMs > closest.resetMs)
    ) {
      closest = { share, resetMs: l.resetMs };
    }
  }
  return spent ?? closest?.resetMs;
}
