/**
 * `@floodgate/http/hono`: the 429 contract as Hono 4 middleware. Only Hono's types are imported;
 * nothing here is Node-specific beyond the default `getAddress`.
 */
import { type Decision, FloodgateError } from '@floodgate/core';
import type { Context, MiddlewareHandler } from 'hono';
import { type ConcurrencyLimitOptions, createConcurrencyEngine } from '../shared/concurrency.js';
import { releaseAfter, releaseOnAbort } from '../shared/concurrency-web.js';
import { createEngine, type Outcome } from '../shared/engine.js';
import { isLatestReport } from '../shared/ledger.js';
import { mergeExposeHeaders } from '../shared/response.js';
import { settleResponse } from '../shared/settle-web.js';
import type { RateLimitOptions, RateLimitRequest } from '../shared/types.js';

/**
 * Options of the Hono adapter: the shared options (`raw` is Hono's `Context`) and `getAddress`.
 * @example
 * On Cloudflare Workers, where the client address comes in a header only the edge sets.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { type HonoRateLimitOptions, rateLimit } from '@floodgate/http/hono';
 *
 * declare const limiter: Limiter;
 * const options: HonoRateLimitOptions = {
 *   limiter,
 *   getAddress: (c) => c.req.header('cf-connecting-ip'),
 * };
 * const middleware = rateLimit(options);
 * ```
 * @public
 */
export interface HonoRateLimitOptions extends RateLimitOptions<Context> {
  /**
   * The client's address for `ipKey()`. The default reads the socket that `@hono/node-server`
   * exposes as `c.env.incoming`; on other runtimes pass one, e.g. `(c) => getConnInfo(c).remote.address`
   * with the runtime's `getConnInfo` from Hono. @default the node-server socket's address
   */
  getAddress?: (c: Context) => string | undefined;
}

/**
 * The variables the middleware sets: `c.get('rateLimit')` is the decision its headers report
 * (every limiter that ran, merged), `undefined` when none decided.
 * @example
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { type RateLimitEnv, rateLimit } from '@floodgate/http/hono';
 * import { Hono } from 'hono';
 *
 * declare const limiter: Limiter;
 * const app = new Hono<RateLimitEnv>();
 * app.use('*', rateLimit({ limiter }));
 * app.get('/', (c) => c.json({ left: c.get('rateLimit')?.remaining }));
 * ```
 * @public
 */
export interface RateLimitEnv {
  Variables: { rateLimit: Decision | undefined };
}

const EXPOSE = 'Access-Control-Expose-Headers';
const noop = (): void => {};

function nodeServerAddress(c: Context): string | undefined {
  const env = c.env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined;
  return env?.incoming?.socket?.remoteAddress;
}

/**
 * The pattern of the handler that will answer: the first matched route that is not middleware
 * (a handler takes no `next`, so it ends the chain). Unknown when only middleware matched (a 404).
 */
function routeOf(c: Context): string | undefined {
  const routes = (c.req as { matchedRoutes?: { path: string; handler: unknown }[] }).matchedRoutes;
  if (!Array.isArray(routes)) return undefined;
  for (const { handler, path } of routes) {
    if (typeof handler === 'function' && handler.length < 2) return path;
  }
  return undefined;
}

/**
 * The request as keys see it. A class rather than a literal with a getter: made on every
 * request, and one shape with a prototype getter stays cheap for V8 and the GC, where a literal
 * with an accessor did not. `address` is asked of `getAddress` when a key first reads it, inside
 * the decision (a `getAddress` that throws is a limiter error, one no key needs is never
 * called), and kept.
 */
class HonoView implements RateLimitRequest<Context> {
  readonly method: string;
  readonly path: string;
  readonly route: string | undefined;
  // An own function, as before: a key may take it off the view (`const { header } = request`).
  readonly header: (name: string) => string | undefined;
  readonly raw: Context;
  #getAddress: ((c: Context) => string | undefined) | undefined;
  #address: string | undefined = undefined;

  constructor(c: Context, getAddress: (c: Context) => string | undefined) {
    const req = c.req;
    this.method = req.method;
    this.path = req.path;
    this.route = routeOf(c);
    this.header = (name) => req.header(name);
    this.raw = c;
    this.#getAddress = getAddress;
  }

  get address(): string | undefined {
    const getAddress = this.#getAddress;
    if (getAddress !== undefined) {
      this.#address = getAddress(this.raw);
      this.#getAddress = undefined;
    }
    return this.#address;
  }
}

/** Puts the outcome's headers on the final response (re-wrapping one with immutable headers). */
function applyHeaders(c: Context, outcome: Outcome): void {
  let headers: Headers;
  const own = outcome.headers;
  try {
    headers = c.res.headers;
    for (const name in own) headers.set(name, own[name] as string);
  } catch {
    c.res = new Response(c.res.body, c.res);
    headers = c.res.headers;
    for (const name in own) headers.set(name, own[name] as string);
  }
  if (outcome.expose.length > 0) {
    headers.set(EXPOSE, mergeExposeHeaders(headers.get(EXPOSE) ?? undefined, outcome.expose));
  }
}

/**
 * Hono middleware. Throws `FloodgateError('INVALID_OPTION')` on bad options, when called.
 * @example
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { headerKey } from '@floodgate/http';
 * import { rateLimit } from '@floodgate/http/hono';
 * import { Hono } from 'hono';
 *
 * declare const limiter: Limiter;
 * const app = new Hono();
 * app.use('/api/*', rateLimit({ limiter, key: headerKey('x-api-key') }));
 * ```
 * @public
 */
export function rateLimit(options: HonoRateLimitOptions): MiddlewareHandler<RateLimitEnv> {
  const { getAddress = nodeServerAddress, ...shared } = options;
  if (typeof getAddress !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'getAddress must be a function');
  }
  const engine = createEngine(shared as RateLimitOptions);
  return async (c, next) => {
    // getAddress runs inside the decision, so its failure is a limiter error like any other.
    // The signal is asked for only when the request is held: on @hono/node-server reading
    // `raw.signal` makes an AbortController per request.
    const outcome = await engine.admit(new HonoView(c, getAddress), () => ({
      signal: c.req.raw.signal,
      dispose: noop,
    }));
    if (outcome === undefined) {
      // 499: the client closed the request while it was queued; nobody will read this.
      return new Response(null, { status: 499 });
    }
    if (outcome.decision !== undefined) c.set('rateLimit', outcome.decision);
    if (outcome.action === 'respond') {
      // Through the context, so headers other middleware prepared (CORS) are kept.
      c.res = c.body(outcome.body, outcome.status as 429);
      applyHeaders(c, outcome);
      return c.res;
    }
    const settle = outcome.settle;
    try {
      await next();
    } catch (error) {
      settle?.(undefined, true);
      throw error;
    }
    // After the handler, on the response it produced: the only place every response passes.
    // A limiter inside this one that wrote headers already reported this one's policies too.
    if (isLatestReport(c, outcome)) applyHeaders(c, outcome);
    if (settle === undefined) return;
    // Refunds: now, at the status. Reservations: once the body is done (or the client left).
    const response = settleResponse(c.res, settle, () => c.req.raw.signal);
    if (response !== c.res) c.res = response;
  };
}

/**
 * Options of the Hono `concurrencyLimit`: the shared ones, and `getAddress` as `rateLimit` has it.
 * @example
 * ```ts
 * import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
 * import type { HonoConcurrencyLimitOptions } from '@floodgate/http/hono';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const options: HonoConcurrencyLimitOptions = {
 *   limiter: createConcurrencyLimiter({ store: new MemoryStore(), limit: 5, leaseMs: '1m' }),
 *   getAddress: (c) => c.req.header('cf-connecting-ip'),
 * };
 * ```
 * @public
 */
export interface HonoConcurrencyLimitOptions extends ConcurrencyLimitOptions<Context> {
  /** The client's address for `ipKey()`. @default the node-server socket's address */
  getAddress?: (c: Context) => string | undefined;
}

/**
 * Hono middleware limiting requests in flight per identity: acquires a lease before the
 * handler and releases it once the response body has been sent, or the client went away (the
 * body cancelled, the request's signal aborted). A denial is a 429 (or `status: 503`) with
 * `Retry-After`. Throws `FloodgateError('INVALID_OPTION')` on bad options, when called.
 * @example
 * ```ts
 * import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
 * import { concurrencyLimit } from '@floodgate/http/hono';
 * import { MemoryStore } from '@floodgate/memory';
 * import { Hono } from 'hono';
 *
 * const limiter = createConcurrencyLimiter({ store: new MemoryStore(), limit: 5, leaseMs: '1m' });
 * const app = new Hono();
 * app.use('/export/*', concurrencyLimit({ limiter }));
 * ```
 * @public
 */
export function concurrencyLimit(options: HonoConcurrencyLimitOptions): MiddlewareHandler {
  const { getAddress = nodeServerAddress, ...shared } = options ?? {};
  if (typeof getAddress !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'getAddress must be a function');
  }
  const enter = createConcurrencyEngine(shared as ConcurrencyLimitOptions);
  return async (c, next) => {
    const admission = await enter(new HonoView(c, getAddress));
    if (admission.action === 'respond') {
      // What CORS middleware that ran first exposed stays exposed, beside Retry-After. Set
      // after the assignment: Hono copies the replaced response's headers over the new one's.
      const existing = c.res.headers.get(EXPOSE) ?? undefined;
      c.res = c.body(admission.body, admission.status as 429, admission.headers);
      const own = admission.headers[EXPOSE];
      if (own !== undefined) {
        c.res.headers.set(EXPOSE, mergeExposeHeaders(existing, own.split(/\s*,\s*/)));
      }
      return c.res;
    }
    releaseOnAbort(c.req.raw.signal, admission.release);
    try {
      await next();
    } catch (error) {
      admission.release();
      throw error;
    }
    c.res = releaseAfter(c.res, admission.release);
  };
}

export type { ConcurrencyLimitOptions } from '../shared/concurrency.js';
export type {
  LimitedContext,
  LimitedResponse,
  RateLimitRequest,
  RateLimitRule,
} from '../shared/types.js';
