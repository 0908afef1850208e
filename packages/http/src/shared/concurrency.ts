// The concurrency middleware, framework-agnostic: acquire a lease for the request's identity
// before the handler, answer a denial (429 or 503 with Retry-After), and hand the adapter a
// release to call once the response finished or the connection closed. Each adapter only says
// when that is (concurrency-io.ts). A store outage is the limiter's to answer (its
// `onStoreError`: by default an in-process fallback); only a limiter that throws gets a 503.
import { FloodgateError } from '@floodgate/core';
import type { ConcurrencyLimiter } from '@floodgate/core/concurrency';
import { checkOptions, type OptionNames } from '@floodgate/core/internal';
import { ipKey } from '../keys/ip.js';
import { report } from './report.js';
import { unavailableProblem } from './response.js';
import type { KeyFunction, RateLimitRequest } from './types.js';

/**
 * Options of `concurrencyLimit`, every adapter's (`raw` is the framework's request).
 * @example
 * ```ts
 * import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
 * import { type ConcurrencyLimitOptions, headerKey } from '@floodgate/http';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const options: ConcurrencyLimitOptions = {
 *   limiter: createConcurrencyLimiter({ store: new MemoryStore(), limit: 10, leaseMs: '2m' }),
 *   key: headerKey('x-api-key'), // 10 requests in flight per API key
 *   status: 503,
 * };
 * ```
 * @public
 */
export interface ConcurrencyLimitOptions<Raw = unknown> {
  /** The limiter (`createConcurrencyLimiter` from `@floodgate/core/concurrency`). */
  limiter: ConcurrencyLimiter;
  /** Names the identity; `undefined` lets the request through unlimited. @default ipKey() */
  key?: KeyFunction<Raw>;
  /** The status of a denial (with `Retry-After`). @default 429 */
  status?: 429 | 503;
  /**
   * When acquiring fails (the store is down, `key` threw): `'fail-closed'` answers 503,
   * `'fail-open'` lets the request through without a lease. @default 'fail-closed'
   */
  onLimiterError?: 'fail-closed' | 'fail-open';
  /** Told about every failure: acquiring (with the request) and releasing. @default none */
  onError?: (error: unknown, request: RateLimitRequest<Raw> | undefined) => void;
}

/** What the adapter does: go on and call `release` when the exchange is over, or answer now. */
export type Admission =
  | { readonly action: 'next'; readonly release: () => void }
  | {
      readonly action: 'respond';
      readonly status: number;
      readonly headers: Record<string, string>;
      readonly body: string;
    };

const OPTION_NAMES = {
  limiter: true,
  key: true,
  status: true,
  onLimiterError: true,
  onError: true,
} as const satisfies OptionNames<ConcurrencyLimitOptions>;
const NOTHING = (): void => {};
const PROBLEM = 'application/problem+json';
export const EXPOSE = 'Access-Control-Expose-Headers';

/** Checks the options once, when the middleware is built; `enter` never rejects. */
export function createConcurrencyEngine(
  options: ConcurrencyLimitOptions,
): (request: RateLimitRequest) => Promise<Admission> {
  if (typeof options !== 'object' || options === null) {
    throw new FloodgateError('INVALID_OPTION', 'concurrencyLimit: options must be an object');
  }
  checkOptions('concurrencyLimit', options, OPTION_NAMES);
  const { limiter, status = 429, onLimiterError = 'fail-closed', onError } = options;
  if (typeof limiter?.acquire !== 'function') {
    throw new FloodgateError(
      'INVALID_OPTION',
      'concurrencyLimit: limiter must be a ConcurrencyLimiter',
    );
  }
  if (status !== 429 && status !== 503) {
    throw new FloodgateError('INVALID_OPTION', 'concurrencyLimit: status must be 429 or 503');
  }
  if (onLimiterError !== 'fail-closed' && onLimiterError !== 'fail-open') {
    throw new FloodgateError(
      'INVALID_OPTION',
      "concurrencyLimit: onLimiterError must be 'fail-closed' or 'fail-open'",
    );
  }
  if (options.key !== undefined && typeof options.key !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'concurrencyLimit: key must be a function');
  }
  if (onError !== undefined && typeof onError !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'concurrencyLimit: onError must be a function');
  }
  const key = options.key ?? ipKey();
  const title = status === 429 ? 'Too Many Requests' : 'Service Unavailable';

  return async (request): Promise<Admission> => {
    try {
      const identity = await key(request);
      if (identity === undefined) return { action: 'next', release: NOTHING };
      const lease = await limiter.acquire(identity);
      if (lease.allowed) {
        let done = false;
        const release = (): void => {
          if (done) return;
          done = true;
          // The lease expires on its own if this fails: report it, never throw into the server.
          lease.release().catch((error: unknown) => report(onError, error, undefined));
        };
        return { action: 'next', release };
      }
      // How long slots are really held (the limiter's recent hold times, at most the store's
      // bound: when the leases in the way expire), in whole seconds rounded up, at least 1.
      // `retryAfterMs` alone is that bound: leaseMs for the newest holder, a minute for a
      // request that takes a second. A limiter without the estimate has only the bound.
      const waitMs = lease.expectedWaitMs ?? lease.retryAfterMs ?? 0;
      const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
      const body = {
        type: 'about:blank',
        title,
        status,
        detail: `Too many requests in flight (limit ${limiter.limit}); retry in ${retryAfter} s.`,
        retryAfter,
      };
      return {
        action: 'respond',
        status,
        // Retry-After is no CORS-safelisted header: a browser app reads it only when exposed.
        headers: {
          'Content-Type': PROBLEM,
          'Retry-After': String(retryAfter),
          [EXPOSE]: 'Retry-After',
        },
        body: JSON.stringify(body),
      };
    } catch (error) {
      report(onError, error, request);
      if (onLimiterError === 'fail-open') return { action: 'next', release: NOTHING };
      return {
        action: 'respond',
        status: 503,
        headers: { 'Content-Type': PROBLEM },
        body: JSON.stringify(unavailableProblem()),
      };
    }
  };
}
