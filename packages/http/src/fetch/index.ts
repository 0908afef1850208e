/**
 * `@floodgate/http/fetch`: the 429 contract for Web `Request`/`Response` handlers (edge
 * runtimes, route handlers, Bun, Deno). Uses only Web APIs.
 */
import { FloodgateError } from '@floodgate/core';
import { createEngine, type Outcome, queueDelay } from '../shared/engine.js';
import { mergeExposeHeaders } from '../shared/response.js';
import type { RateLimitOptions, RateLimitRequest } from '../shared/types.js';

export interface FetchRateLimitOptions extends RateLimitOptions<Request> {
  /**
   * The client's address for `ipKey()`: a Web `Request` carries none. Take it from your platform
   * (e.g. the runtime's connection info, or a header only your edge can set). @default none: `ipKey()` fails
   */
  getAddress?: (request: Request) => string | undefined;
}

/** `(request) → Response` to send now, or `undefined` to go on. */
export interface FetchRateLimiter {
  (request: Request): Promise<Response | undefined>;
  /** The rate-limit headers for an admitted request, to add to its response. */
  headersFor(request: Request): Headers | undefined;
  /** Wraps a handler: denials are answered, admitted responses get their headers. */
  wrap<A extends unknown[]>(
    handler: (request: Request, ...rest: A) => Response | Promise<Response>,
  ): (request: Request, ...rest: A) => Promise<Response>;
}

const EXPOSE = 'Access-Control-Expose-Headers';

function view(request: Request, address: string | undefined): RateLimitRequest<Request> {
  return {
    method: request.method,
    path: new URL(request.url).pathname,
    route: undefined,
    address,
    header: (name) => request.headers.get(name) ?? undefined,
    raw: request,
  };
}

function toHeaders(outcome: Outcome): Headers {
  const headers = new Headers(outcome.headers);
  if (outcome.expose.length > 0) headers.set(EXPOSE, mergeExposeHeaders(undefined, outcome.expose));
  return headers;
}

/** Copies headers onto a response; a response with immutable headers is re-wrapped first. */
export function withHeaders(response: Response, headers: Headers): Response {
  let out = response;
  try {
    out.headers.set('x-floodgate-probe', '1');
    out.headers.delete('x-floodgate-probe');
  } catch {
    out = new Response(response.body, response);
  }
  for (const [name, value] of headers) {
    out.headers.set(
      name,
      name.toLowerCase() === EXPOSE.toLowerCase()
        ? mergeExposeHeaders(out.headers.get(EXPOSE) ?? undefined, value.split(', '))
        : value,
    );
  }
  return out;
}

/**
 * Rate limiting for fetch-style handlers.
 * @example
 * const limit = rateLimit({ limiter, key: headerKey('x-api-key') });
 * export default { fetch: limit.wrap(async (request) => new Response('ok')) };
 */
export function rateLimit(options: FetchRateLimitOptions): FetchRateLimiter {
  const { getAddress, ...shared } = options;
  if (getAddress !== undefined && typeof getAddress !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'getAddress must be a function');
  }
  const engine = createEngine(shared as RateLimitOptions);
  const pending = new WeakMap<Request, Headers>();

  const check = async (request: Request): Promise<Response | undefined> => {
    const outcome = await engine.decide(view(request, getAddress?.(request)));
    const headers = toHeaders(outcome);
    if (outcome.action === 'respond') {
      return new Response(outcome.body, { status: outcome.status, headers });
    }
    if (outcome.delayMs > 0 && !(await queueDelay(outcome.delayMs, request.signal))) {
      // 499: the client closed the request while it was queued; nobody will read this.
      return new Response(null, { status: 499 });
    }
    pending.set(request, headers);
    return undefined;
  };

  const limiter = check as FetchRateLimiter;
  limiter.headersFor = (request) => pending.get(request);
  limiter.wrap =
    (handler) =>
    async (request, ...rest) => {
      const denied = await check(request);
      if (denied !== undefined) return denied;
      const response = await handler(request, ...rest);
      const headers = pending.get(request);
      return headers === undefined ? response : withHeaders(response, headers);
    };
  return limiter;
}

export type {
  LimitedContext,
  LimitedResponse,
  RateLimitRequest,
  RateLimitRule,
} from '../shared/types.js';
