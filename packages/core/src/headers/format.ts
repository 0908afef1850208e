import type { Item } from 'structured-headers';
import { serializeDictionary, serializeItem, serializeList } from 'structured-headers';
import { quotaBackMs } from '../binding.js';
import { FloodgateError } from '../errors.js';
import type { Decision, PolicyDecision } from '../types.js';
import { writeDraft8 } from './draft8.js';
import { msToSeconds, toCount } from './numbers.js';
import { formatRetryAfter } from './retry-after.js';

/**
 * Which revision of draft-ietf-httpapi-ratelimit-headers to speak. `'draft-8'` is the structured
 * List form that drafts 08 onwards share.
 * @example
 * Choosing the form per deployment, for clients that only read the older headers.
 * ```ts
 * import { formatRateLimitHeaders, type RateLimitStandard } from '@floodgate/core/headers';
 * import type { Decision } from '@floodgate/core';
 *
 * declare const decision: Decision;
 * const standard: RateLimitStandard = process.env.LEGACY_CLIENTS ? 'draft-6' : 'draft-8';
 * const headers = formatRateLimitHeaders(decision, { standard });
 * ```
 * @public
 */
export type RateLimitStandard = 'draft-6' | 'draft-7' | 'draft-8';

/**
 * How `formatRateLimitHeaders` writes a decision: which draft, whether legacy headers too, and
 * how much jitter to add to `Retry-After`.
 * @example
 * ```ts
 * import {
 *   type FormatRateLimitHeadersOptions,
 *   formatRateLimitHeaders,
 * } from '@floodgate/core/headers';
 * import type { Decision } from '@floodgate/core';
 *
 * declare const decision: Decision;
 * const options: FormatRateLimitHeadersOptions = {
 *   standard: 'draft-7',
 *   legacy: true,
 *   retryAfterJitterMs: 2_000,
 * };
 * const headers = formatRateLimitHeaders(decision, options);
 * ```
 * @public
 */
export interface FormatRateLimitHeadersOptions {
  /**
   * Default `'draft-8'`. `false` sends no `RateLimit*` header: only `X-RateLimit-*` (with
   * `legacy`) and, on a denial, `Retry-After`.
   */
  readonly standard?: RateLimitStandard | false;
  /** Also send `X-RateLimit-Limit/-Remaining/-Reset` (delta-seconds). */
  readonly legacy?: boolean;
  /**
   * Spread denied clients over `[0, J]` ms extra (a number `J`) or `[min, max]` ms extra (a
   * range), so they do not return at once; see `formatRetryAfter`.
   */
  readonly retryAfterJitterMs?: number | readonly [min: number, max: number];
  /** Uniform in [0, 1); injectable so tests can pin the jitter. */
  readonly random?: () => number;
}

/**
 * The response headers for a decision. Every time value is delta-seconds rounded up: a
 * timestamp would depend on the client's clock agreeing with ours.
 * @example
 * Setting the headers on a node:http response; a denial also gets `Retry-After`.
 * ```ts
 * import type { ServerResponse } from 'node:http';
 * import type { Decision } from '@floodgate/core';
 * import { formatRateLimitHeaders } from '@floodgate/core/headers';
 *
 * declare const decision: Decision;
 * declare const res: ServerResponse;
 * for (const [name, value] of Object.entries(formatRateLimitHeaders(decision))) {
 *   res.setHeader(name, value);
 * }
 * ```
 * @public
 */
export function formatRateLimitHeaders(
  decision: Decision,
  options: FormatRateLimitHeadersOptions = {},
): Record<string, string> {
  const standard = options.standard ?? 'draft-8';
  const headers: Record<string, string> = {};
  const policies = decision.policies.length > 0 ? decision.policies : [standIn(decision)];

  if (standard === 'draft-8') {
    writeDraft8(policies, headers);
  } else if (standard === 'draft-7') {
    headers.RateLimit = serializeDictionary({
      limit: toCount(decision.limit),
      remaining: toCount(decision.remaining),
      reset: bindingResetSeconds(decision),
    });
    headers['RateLimit-Policy'] = serializeList(policies.map(windowMember));
  } else if (standard === 'draft-6') {
    headers['RateLimit-Limit'] = serializeItem(toCount(decision.limit));
    headers['RateLimit-Remaining'] = serializeItem(toCount(decision.remaining));
    headers['RateLimit-Reset'] = serializeItem(bindingResetSeconds(decision));
    headers['RateLimit-Policy'] = serializeList(policies.map(windowMember));
  } else if (standard !== false) {
    // Reachable only from untyped callers; a typo here would otherwise silently drop headers.
    throw new FloodgateError(
      'INVALID_OPTION',
      `unknown RateLimit header standard: ${String(standard)}`,
    );
  }

  if (options.legacy) {
    headers['X-RateLimit-Limit'] = String(toCount(decision.limit));
    headers['X-RateLimit-Remaining'] = String(toCount(decision.remaining));
    headers['X-RateLimit-Reset'] = String(bindingResetSeconds(decision));
  }

  if (!decision.allowed) {
    headers['Retry-After'] = formatRetryAfter(
      decision.retryAfterMs,
      options.retryAfterJitterMs ?? 0,
      options.random ?? Math.random,
    );
  }
  return headers;
}

/** Lets a decision without per-policy detail (e.g. from a fallback path) still get headers. */
function standIn(decision: Decision): PolicyDecision {
  return {
    name: 'default',
    kind: 'fixedWindow',
    allowed: decision.allowed,
    limit: decision.limit,
    windowMs: Number.NaN,
    remaining: decision.remaining,
    resetAfterMs: decision.resetAfterMs,
    retryAfterMs: decision.retryAfterMs,
    delayMs: decision.delayMs,
  };
}

/**
 * draft-6/7 and legacy carry one policy's numbers: the binding policy's `limit`/`remaining`
 * (the decision's) and that policy's own reset, not the decision's maximum across policies, so
 * `remaining / reset` describes one quota. A denied decision's reset is never before its retry
 * time, whichever policy binds.
 */
function bindingResetSeconds(decision: Decision): number {
  const ms = quotaBackMs(decision.binding);
  return msToSeconds(decision.allowed ? ms : Math.max(ms, decision.retryAfterMs));
}

function windowMember(p: PolicyDecision): Item {
  const params = new Map<string, number>();
  if (Number.isFinite(p.windowMs)) params.set('w', msToSeconds(p.windowMs));
  return [toCount(p.limit), params];
}
