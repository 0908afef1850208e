/**
 * `@floodgate/http/node`: the 429 contract for plain node:http handlers (and connect-style
 * stacks). No framework is loaded.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Decision } from '@floodgate/core';
import { type ConcurrencyLimitOptions, createConcurrencyEngine } from '../shared/concurrency.js';
import { admitIncoming } from '../shared/concurrency-io.js';
import { createEngine } from '../shared/engine.js';
import { answerFailure, incomingView, limitIncoming, pathOf } from '../shared/node-io.js';
import type { RateLimitOptions } from '../shared/types.js';

declare module 'http' {
  interface IncomingMessage {
    /**
     * The rate-limit decision, set by `@floodgate/http`'s node and Express adapters: every
     * limiter that ran on the request, merged (what its headers report). Absent when none decided.
     */
    rateLimit?: Decision;
  }
}

/**
 * Options of the node:http adapter: the shared options; `raw` is the `IncomingMessage`.
 * @example
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { type NodeRateLimitOptions, rateLimit } from '@floodgate/http/node';
 *
 * declare const limiter: Limiter;
 * const options: NodeRateLimitOptions = {
 *   limiter,
 *   skip: (request) => request.raw.url === '/healthz', // raw is the IncomingMessage
 * };
 * const limit = rateLimit(options);
 * ```
 * @public
 */
export type NodeRateLimitOptions = RateLimitOptions<IncomingMessage>;

/**
 * Resolves `true` when the request may go on (its rate-limit headers are set on `res`), `false`
 * when it was answered (429, 503) or its client left while queued. With `next`, calls it on `true`.
 * @example
 * ```ts
 * import type { RequestListener } from 'node:http';
 * import type { NodeRateLimiter } from '@floodgate/http/node';
 *
 * function limited(limit: NodeRateLimiter, handler: RequestListener): RequestListener {
 *   return async (req, res) => {
 *     if (await limit(req, res)) handler(req, res);
 *   };
 * }
 * ```
 * @public
 */
export type NodeRateLimiter = (
  req: IncomingMessage,
  res: ServerResponse,
  next?: (error?: unknown) => void,
) => Promise<boolean>;

/**
 * Rate limiting for node:http. Throws `FloodgateError('INVALID_OPTION')` on bad options, when
 * called.
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import type { Limiter } from '@floodgate/core';
 * import { rateLimit } from '@floodgate/http/node';
 *
 * declare const limiter: Limiter;
 * const limit = rateLimit({ limiter });
 * createServer(async (req, res) => {
 *   if (!(await limit(req, res))) return; // answered: 429, 503, or the client left while queued
 *   res.end('ok');
 * }).listen(3000);
 * ```
 * @public
 */
export function rateLimit(options: NodeRateLimitOptions): NodeRateLimiter {
  const engine = createEngine(options as RateLimitOptions);
  return async (req, res, next) => {
    let goOn: boolean;
    try {
      goOn = await limitIncoming(
        engine,
        incomingView(req, req, pathOf(req.url), undefined),
        req,
        res,
      );
    } catch (error) {
      // Never a rejection nobody handles, never a request left hanging.
      if (next !== undefined) next(error);
      else answerFailure(res);
      return false;
    }
    if (goOn) next?.();
    return goOn;
  };
}

/**
 * Concurrency limiting for node:http: acquires a lease for the request's identity, and releases
 * it when the response finished or the connection closed. Resolves `true` when the request may go
 * on, `false` when it was answered (429 or 503 with `Retry-After`). Throws
 * `FloodgateError('INVALID_OPTION')` on bad options, when called.
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
 * import { concurrencyLimit } from '@floodgate/http/node';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter = createConcurrencyLimiter({ store: new MemoryStore(), limit: 5, leaseMs: '1m' });
 * const inFlight = concurrencyLimit({ limiter });
 * createServer(async (req, res) => {
 *   if (!(await inFlight(req, res))) return; // answered: too many in flight
 *   res.end('ok');
 * }).listen(3000);
 * ```
 * @public
 */
export function concurrencyLimit(
  options: ConcurrencyLimitOptions<IncomingMessage>,
): NodeRateLimiter {
  const enter = createConcurrencyEngine(options as ConcurrencyLimitOptions);
  return async (req, res, next) => {
    let goOn: boolean;
    try {
      goOn = admitIncoming(res, await enter(incomingView(req, req, pathOf(req.url), undefined)));
    } catch (error) {
      if (next !== undefined) next(error);
      else answerFailure(res);
      return false;
    }
    if (goOn) next?.();
    return goOn;
  };
}

export type { ConcurrencyLimitOptions } from '../shared/concurrency.js';
export type {
  LimitedContext,
  LimitedResponse,
  RateLimitRequest,
  RateLimitRule,
} from '../shared/types.js';
