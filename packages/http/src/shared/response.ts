import type { Decision, PolicyDecision } from '@floodgate/core';
import { formatRateLimitHeaders, formatRetryAfter } from '@floodgate/core/headers';
import { joinedNames } from './expose.js';
import type { ProblemDetails, ProblemPolicy } from './types.js';

/**
 * The header options, normalised: what {@link decisionHeaders} formats by.
 * @example
 * ```ts
 * import type { HeaderSettings } from '@floodgate/http/adapter';
 *
 * // draft-7 `RateLimit` plus `X-RateLimit-*`, and up to 5 s of jitter on `Retry-After`.
 * const settings: HeaderSettings = {
 *   standard: 'draft-7',
 *   legacy: true,
 *   jitterMs: [0, 5000],
 *   random: Math.random,
 * };
 * ```
 * @public
 */
export interface HeaderSettings {
  readonly standard: 'draft-6' | 'draft-7' | 'draft-8' | false;
  readonly legacy: boolean;
  /** Jitter range in ms, `min ≤ max`. */
  readonly jitterMs: readonly [number, number];
  readonly random: () => number;
}

/**
 * `Retry-After` in whole seconds: `ceil((retryAfterMs + jitter) / 1000)`, jitter uniform in
 * `[min, max]` ms. Never earlier than `retryAfterMs`, whatever `random` returns. The number
 * core's `formatRetryAfter` writes, which is what {@link decisionHeaders} sends.
 * @example
 * ```ts
 * import { retryAfterSeconds } from '@floodgate/http/adapter';
 *
 * retryAfterSeconds(1500); // 2
 * retryAfterSeconds(1500, [0, 5000]); // 2 to 7
 * ```
 * @public
 */
export function retryAfterSeconds(
  retryAfterMs: number,
  jitterMs: readonly [number, number] = [0, 0],
  random: () => number = Math.random,
): number {
  return Number(formatRetryAfter(retryAfterMs, jitterMs, random));
}

/**
 * The headers for a (merged) decision, all written by core's `formatRateLimitHeaders`: the
 * selected `RateLimit*` form, legacy `X-RateLimit-*` if asked, and `Retry-After` on a denial
 * (always, even with `headers: false`), jittered as the settings say. `retryAfter` is the
 * `Retry-After` value in seconds, `undefined` when the decision allowed the request.
 * @example
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { decisionHeaders } from '@floodgate/http/adapter';
 *
 * declare const limiter: Limiter;
 * const decision = await limiter.limit('key_123');
 * const settings = { standard: 'draft-8', legacy: false, jitterMs: [0, 0], random: Math.random } as const;
 * const { headers, retryAfter } = decisionHeaders(decision, settings);
 * const response = new Response(null, { status: retryAfter === undefined ? 204 : 429, headers });
 * ```
 * @public
 */
export function decisionHeaders(
  decision: Decision,
  settings: HeaderSettings,
): { headers: Record<string, string>; retryAfter: number | undefined } {
  const headers = formatRateLimitHeaders(decision, {
    standard: settings.standard,
    legacy: settings.legacy,
    retryAfterJitterMs: settings.jitterMs,
    random: settings.random,
  });
  const retryAfter = headers['Retry-After'];
  return { headers, retryAfter: retryAfter === undefined ? undefined : Number(retryAfter) };
}

const seconds = (ms: number): number => (ms > 0 ? Math.ceil(ms / 1000) : 0);

function problemPolicy(p: PolicyDecision): ProblemPolicy {
  const reset = p.allowed ? p.resetAfterMs : Math.max(p.resetAfterMs, p.retryAfterMs);
  // Two literals, not a spread: one per policy of every 429. Same fields, same order.
  return Number.isFinite(p.windowMs)
    ? {
        name: p.name,
        limit: p.limit,
        remaining: p.remaining,
        resetSeconds: seconds(reset),
        windowSeconds: seconds(p.windowMs),
      }
    : { name: p.name, limit: p.limit, remaining: p.remaining, resetSeconds: seconds(reset) };
}

/**
 * The RFC 9457 body of a 429, naming the policies that denied the request; `retryAfter` is the
 * `Retry-After` value in seconds.
 * @example
 * ```ts
 * import type { Decision } from '@floodgate/core';
 * import { tooManyRequestsProblem } from '@floodgate/http/adapter';
 *
 * declare const decision: Decision;
 * const problem = tooManyRequestsProblem(decision, 2);
 * const response = new Response(JSON.stringify(problem), {
 *   status: 429,
 *   headers: { 'Content-Type': 'application/problem+json', 'Retry-After': '2' },
 * });
 * ```
 * @public
 */
export function tooManyRequestsProblem(decision: Decision, retryAfter: number): ProblemDetails {
  // A shadowed policy's denial is reported in `policies`, not named as violated.
  const violated = decision.policies
    .filter((p) => !p.allowed && p.shadow !== true)
    .map((p) => p.name);
  const names = violated.map((n) => JSON.stringify(n)).join(', ');
  return {
    type: 'about:blank',
    title: 'Too Many Requests',
    status: 429,
    detail: `Rate limit exceeded${names ? ` for ${names}` : ''}; retry in ${retryAfter} s.`,
    retryAfter,
    violated,
    policies: decision.policies.map(problemPolicy),
  };
}

/**
 * The RFC 9457 body of the 503 sent when deciding failed under `'fail-closed'`.
 * @example
 * ```ts
 * import { unavailableProblem } from '@floodgate/http/adapter';
 *
 * const response = new Response(JSON.stringify(unavailableProblem()), {
 *   status: 503,
 *   headers: { 'Content-Type': 'application/problem+json' },
 * });
 * ```
 * @public
 */
export function unavailableProblem(): ProblemDetails {
  return {
    type: 'about:blank',
    title: 'Service Unavailable',
    status: 503,
    detail: 'The rate limiter could not decide on this request.',
  };
}

/**
 * `Access-Control-Expose-Headers` with `names` added to what is there (from CORS middleware),
 * each name once, whatever its case. Names are added even next to `*`, which does not cover
 * credentialed requests.
 * @example
 * ```ts
 * import { mergeExposeHeaders } from '@floodgate/http/adapter';
 *
 * mergeExposeHeaders('Content-Length', ['RateLimit', 'RateLimit-Policy']);
 * // 'Content-Length, RateLimit, RateLimit-Policy'
 * ```
 * @public
 */
export function mergeExposeHeaders(existing: string | undefined, names: readonly string[]): string {
  // The common cases: nothing there yet (no CORS middleware before us), or exactly our own list
  // (merged again just before the head is written). Our names are one outcome's header names.
  const joined = joinedNames(names);
  if (joined !== undefined && (existing === undefined || existing === '' || existing === joined)) {
    return joined;
  }
  const current = (existing ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const seen = new Set(current.map((s) => s.toLowerCase()));
  for (const name of names) {
    if (!seen.has(name.toLowerCase())) {
      seen.add(name.toLowerCase());
      current.push(name);
    }
  }
  return current.join(', ');
}
