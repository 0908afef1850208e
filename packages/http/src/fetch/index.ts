/**
 * `@floodgate/http/fetch`: the 429 contract for Web `Request`/`Response` handlers (edge
 * runtimes, route handlers, Bun, Deno). Uses only Web APIs.
 */
import { FloodgateError } from '@floodgate/core';
import { type ConcurrencyLimitOptions, createConcurrencyEngine } from '../shared/concurrency.js';
import { denialResponse, releaseAfter, releaseOnAbort } from '../shared/concurrency-web.js';
import { createEngine, type Outcome } from '../shared/engine.js';
import { isLatestReport, rateLimitOf } from '../shared/ledger.js';
import { settleResponse } from '../shared/settle-web.js';
import { createSlot } from '../shared/slot.js';
import type { RateLimitOptions } from '../shared/types.js';
import { usageOf } from '../shared/usage.js';
import { toHeaders, withHeaders, withOutcome } from './headers.js';
import { type AddressOf, FetchView } from './view.js';

/**
 * Options of the fetch adapter: the shared options (`raw` is the `Request`) and `getAddress`.
 * @example
 * Behind Cloudflare, which puts the client address in a header clients cannot set.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { type FetchRateLimitOptions, rateLimit } from '@floodgate/http/fetch';
 *
 * declare const limiter: Limiter;
 * const options: FetchRateLimitOptions = {
 *   limiter,
 *   getAddress: (request) => request.headers.get('cf-connecting-ip') ?? undefined,
 * };
 * const limit = rateLimit(options);
 * ```
 * @public
 */
export interface FetchRateLimitOptions<A extends unknown[] = unknown[]>
  extends RateLimitOptions<Request> {
  /**
   * The client's address for `ipKey()`: a Web `Request` carries none. Take it from your platform:
   * it gets the arguments the runtime passed the handler after the request (Bun's `server`, for
   * `server.requestIP(request)`; Deno's `info`, for `info.remoteAddr`), or read a header only your
   * edge can set (Workers: `cf-connecting-ip`). @default none: `ipKey()` fails
   */
  getAddress?: (request: Request, ...rest: A) => string | undefined;
}

/**
 * `(request) → Response` to send now, or `undefined` to go on.
 * @example
 * A route handler that checks first and adds the headers itself.
 * ```ts
 * import { type FetchRateLimiter, withHeaders } from '@floodgate/http/fetch';
 *
 * declare const limit: FetchRateLimiter;
 * export async function GET(request: Request): Promise<Response> {
 *   const denied = await limit(request);
 *   if (denied) return denied;
 *   const headers = limit.headersFor(request);
 *   const response = Response.json({ items: [] });
 *   return headers ? withHeaders(response, headers) : response;
 * }
 * ```
 * @public
 */
export interface FetchRateLimiter<A extends unknown[] = unknown[]> {
  /** `rest`: what the runtime passed the handler after the request, handed to `getAddress`. */
  (request: Request, ...rest: A): Promise<Response | undefined>;
  /** The rate-limit headers for an admitted request, to add to its response. */
  headersFor(request: Request): Headers | undefined;
  /**
   * Wraps a handler: denials are answered, admitted responses get their headers. With `settle`
   * (and `skip*Requests`), only a wrapped handler's requests are settled: once the response body
   * has been read to its end, or the client left.
   */
  wrap<B extends A>(
    handler: (request: Request, ...rest: B) => Response | Promise<Response>,
  ): (request: Request, ...rest: B) => Promise<Response>;
}

const noop = (): void => {};
const signalOf = (request: Request) => (): AbortSignal => request.signal;

/**
 * Rate limiting for fetch-style handlers. Throws `FloodgateError('INVALID_OPTION')` on bad
 * options, when called.
 * @example
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { headerKey } from '@floodgate/http';
 * import { rateLimit } from '@floodgate/http/fetch';
 *
 * declare const limiter: Limiter;
 * const limit = rateLimit({ limiter, key: headerKey('x-api-key') });
 * export default { fetch: limit.wrap(async (request) => new Response('ok')) };
 * ```
 * @public
 */
export function rateLimit<A extends unknown[] = unknown[]>(
  options: FetchRateLimitOptions<A>,
): FetchRateLimiter<A> {
  const { getAddress, ...shared } = options;
  if (getAddress !== undefined && typeof getAddress !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'getAddress must be a function');
  }
  const engine = createEngine(shared as RateLimitOptions);
  // Per request and per limiter: the outcome its response is to report, and the `Headers`
  // `headersFor` made of it (made only when asked, and the same object on every call). In slots
  // rather than WeakMaps: a WeakMap entry per short-lived request is GC work.
  const pending = createSlot<Outcome>('floodgate.fetch.pending');
  const built = createSlot<{ outcome: Outcome; headers: Headers }>('floodgate.fetch.headers');
  const headersOf = (request: Request): Headers | undefined => {
    const outcome = pending.get(request);
    if (outcome === undefined) return undefined;
    const made = built.get(request);
    if (made !== undefined && made.outcome === outcome) return made.headers;
    const headers = toHeaders(outcome);
    built.set(request, { outcome, headers });
    return headers;
  };

  const check = async (request: Request, ...rest: A): Promise<Response | undefined> => {
    // getAddress runs inside the decision, so its failure is a limiter error like any other.
    // The signal is read only when the request is held: some runtimes make it on first read.
    const outcome = await engine.admit(
      new FetchView(request, getAddress as AddressOf, rest),
      () => ({ signal: request.signal, dispose: noop }),
    );
    if (outcome === undefined) {
      // 499: the client closed the request while it was queued; nobody will read this.
      return new Response(null, { status: 499 });
    }
    if (outcome.action === 'respond') {
      return new Response(outcome.body, { status: outcome.status, headers: toHeaders(outcome) });
    }
    pending.set(request, outcome);
    return undefined;
  };

  const limiter = check as FetchRateLimiter<A>;
  limiter.headersFor = headersOf;
  limiter.wrap =
    (handler) =>
    async (request, ...rest) => {
      const denied = await check(request, ...rest);
      if (denied !== undefined) return denied;
      // Read before the handler runs: a limiter wrapped inside this one replaces the entry.
      const own = pending.get(request);
      const settle = own?.action === 'next' ? own.settle : undefined;
      let response: Response;
      try {
        response = await handler(request, ...rest);
      } catch (error) {
        settle?.(undefined, true);
        throw error;
      }
      const admitted = pending.get(request);
      // A limiter wrapped inside this one that wrote headers already reported this one's too.
      if (admitted !== undefined && isLatestReport(request, admitted)) {
        // Headers the handler took from headersFor (and may have added to) are applied as they are.
        const made = built.get(request);
        response =
          made !== undefined && made.outcome === admitted
            ? withHeaders(response, made.headers)
            : withOutcome(response, admitted);
      }
      // skipSuccessfulRequests / skipFailedRequests: the status is known once the handler
      // answered. `settle`: once the body is done, or the client left.
      return settle === undefined ? response : settleResponse(response, settle, signalOf(request));
    };
  return limiter;
}

/**
 * Options of the fetch `concurrencyLimit`: the shared ones, and `getAddress` as `rateLimit` has it.
 * @example
 * ```ts
 * import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
 * import type { FetchConcurrencyLimitOptions } from '@floodgate/http/fetch';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const options: FetchConcurrencyLimitOptions = {
 *   limiter: createConcurrencyLimiter({ store: new MemoryStore(), limit: 5, leaseMs: '1m' }),
 *   getAddress: (request) => request.headers.get('cf-connecting-ip') ?? undefined,
 * };
 * ```
 * @public
 */
export interface FetchConcurrencyLimitOptions<A extends unknown[] = unknown[]>
  extends ConcurrencyLimitOptions<Request> {
  /** The client's address for `ipKey()`. @default none: `ipKey()` fails */
  getAddress?: (request: Request, ...rest: A) => string | undefined;
}

/**
 * The fetch `concurrencyLimit`: only a wrapper, since the lease lives as long as the response.
 * @example
 * ```ts
 * import type { FetchConcurrencyLimiter } from '@floodgate/http/fetch';
 *
 * declare const inFlight: FetchConcurrencyLimiter;
 * export default { fetch: inFlight.wrap(async () => new Response('ok')) };
 * ```
 * @public
 */
export interface FetchConcurrencyLimiter<A extends unknown[] = unknown[]> {
  /** Wraps a handler: denials are answered; an admitted request holds a lease until its response is done. */
  wrap<B extends A>(
    handler: (request: Request, ...rest: B) => Response | Promise<Response>,
  ): (request: Request, ...rest: B) => Promise<Response>;
}

/**
 * Limits requests in flight per identity for a fetch handler: acquires a lease before the
 * handler, releases it once the response body has been read to its end, or cancelled, or the
 * request's signal aborted (the client went away). A denial is a 429 (or `status: 503`) with
 * `Retry-After`. Throws `FloodgateError('INVALID_OPTION')` on bad options, when called.
 * @example
 * ```ts
 * import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
 * import { concurrencyLimit } from '@floodgate/http/fetch';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter = createConcurrencyLimiter({ store: new MemoryStore(), limit: 5, leaseMs: '1m' });
 * const inFlight = concurrencyLimit({
 *   limiter,
 *   getAddress: (request) => request.headers.get('cf-connecting-ip') ?? undefined,
 * });
 * export default { fetch: inFlight.wrap(async () => new Response('ok')) };
 * ```
 * @public
 */
export function concurrencyLimit<A extends unknown[] = unknown[]>(
  options: FetchConcurrencyLimitOptions<A>,
): FetchConcurrencyLimiter<A> {
  const { getAddress, ...shared } = options ?? {};
  if (getAddress !== undefined && typeof getAddress !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'getAddress must be a function');
  }
  const enter = createConcurrencyEngine(shared as ConcurrencyLimitOptions);
  return {
    wrap:
      (handler) =>
      async (request, ...rest) => {
        const admission = await enter(new FetchView(request, getAddress as AddressOf, rest));
        if (admission.action === 'respond') return denialResponse(admission);
        releaseOnAbort(request.signal, admission.release);
        let response: Response;
        try {
          response = await handler(request, ...rest);
        } catch (error) {
          admission.release();
          throw error;
        }
        return releaseAfter(response, admission.release);
      },
  };
}

export type { ConcurrencyLimitOptions } from '../shared/concurrency.js';
export type { RequestUsage } from '../shared/settle-types.js';
export type {
  LimitedContext,
  LimitedResponse,
  RateLimitRequest,
  RateLimitRule,
} from '../shared/types.js';
export { rateLimitOf, usageOf, withHeaders };
