/**
 * `@floodgate/http/express`: the 429 contract as Express (4 and 5) middleware. Express itself is
 * never imported at run time; only its types are.
 */
import type { Decision } from '@floodgate/core';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { canonicalPath } from '../keys/route.js';
import { type ConcurrencyLimitOptions, createConcurrencyEngine } from '../shared/concurrency.js';
import { admitIncoming } from '../shared/concurrency-io.js';
import { createEngine } from '../shared/engine.js';
import type { FrameworkSettings, TrustProxy } from '../shared/framework.js';
import { incomingView, limitIncoming, pathOf } from '../shared/node-io.js';
import type { RateLimitOptions } from '../shared/types.js';

declare global {
  namespace Express {
    interface Request {
      /**
       * The rate-limit decision, set by `@floodgate/http/express`: every limiter that ran on
       * the request, merged (what its headers report). Absent when none decided.
       */
      rateLimit?: Decision;
    }
  }
}

/**
 * Options of the Express adapter: the shared options; `raw` is Express's `req`.
 * @example
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { type ExpressRateLimitOptions, rateLimit } from '@floodgate/http/express';
 *
 * declare const limiter: Limiter;
 * const options: ExpressRateLimitOptions = {
 *   limiter,
 *   skip: (request) => request.raw.originalUrl === '/healthz', // raw is Express's req
 * };
 * const middleware = rateLimit(options);
 * ```
 * @public
 */
export type ExpressRateLimitOptions = RateLimitOptions<Request>;

/** Express's own routing and proxy settings, which `routeKey()` and `ipKey()` follow. */
function frameworkOf(req: Request): FrameworkSettings {
  const app = req.app;
  return {
    name: 'Express',
    trustProxy: app?.get('trust proxy') as TrustProxy | undefined,
    caseSensitive: Boolean(app?.get('case sensitive routing')),
    strictRouting: Boolean(app?.get('strict routing')),
  };
}

/**
 * The matched pattern, known when the middleware is mounted on a route (`app.get(p, mw, h)`).
 * `baseUrl` is the request's own spelling of the mount path (`/API`), so it is canonicalized.
 */
function routeOf(req: Request, framework: FrameworkSettings): string | undefined {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path !== 'string') return undefined;
  const base = req.baseUrl
    ? canonicalPath(req.baseUrl, { ...framework, strictRouting: false })
    : '';
  if (base === '' || base === '/') return path;
  return path === '/' ? base : `${base}${path}`;
}

/**
 * Express middleware. Mount it app-wide (`app.use`) or on one route. Throws
 * `FloodgateError('INVALID_OPTION')` on bad options, when called.
 * @example
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { ipKey } from '@floodgate/http';
 * import { rateLimit } from '@floodgate/http/express';
 * import express from 'express';
 *
 * declare const limiter: Limiter;
 * declare const loginLimiter: Limiter;
 * const app = express();
 * app.use(rateLimit({ limiter, key: ipKey({ trustProxy: 'loopback' }) }));
 * app.post('/login', rateLimit({ limiter: loginLimiter }), (req, res) => res.send('ok'));
 * ```
 * @public
 */
export function rateLimit(options: ExpressRateLimitOptions): RequestHandler {
  const engine = createEngine(options as RateLimitOptions);
  return (req: Request, res: Response, next: NextFunction): void => {
    const framework = frameworkOf(req);
    const path = pathOf(req.originalUrl ?? req.url);
    const view = incomingView(req, req, path, routeOf(req, framework), framework);
    limitIncoming(engine, view, req, res)
      .then((goOn) => {
        if (goOn) next();
      })
      // Deciding never rejects; this is for a failure writing the response.
      .catch(next);
  };
}

/**
 * Express middleware limiting requests in flight per identity: acquires a lease before the
 * handler, releases it when the response finished or the connection closed; a denial is a 429
 * (or `status: 503`) with `Retry-After`. Throws `FloodgateError('INVALID_OPTION')` on bad
 * options, when called.
 * @example
 * ```ts
 * import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
 * import { concurrencyLimit } from '@floodgate/http/express';
 * import { MemoryStore } from '@floodgate/memory';
 * import express from 'express';
 *
 * const limiter = createConcurrencyLimiter({ store: new MemoryStore(), limit: 5, leaseMs: '1m' });
 * const app = express();
 * app.post('/export', concurrencyLimit({ limiter }), (req, res) => res.send('ok'));
 * ```
 * @public
 */
export function concurrencyLimit(options: ConcurrencyLimitOptions<Request>): RequestHandler {
  const enter = createConcurrencyEngine(options as ConcurrencyLimitOptions);
  return (req: Request, res: Response, next: NextFunction): void => {
    const framework = frameworkOf(req);
    const path = pathOf(req.originalUrl ?? req.url);
    enter(incomingView(req, req, path, routeOf(req, framework), framework))
      .then((admission) => {
        if (admitIncoming(res, admission)) next();
      })
      .catch(next);
  };
}

export type { ConcurrencyLimitOptions } from '../shared/concurrency.js';
export type {
  LimitedContext,
  LimitedResponse,
  RateLimitRequest,
  RateLimitRule,
} from '../shared/types.js';
