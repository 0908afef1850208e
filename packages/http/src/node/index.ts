/**
 * `@floodgate/http/node`: the 429 contract for plain node:http handlers (and connect-style
 * stacks). No framework is loaded.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createEngine, queueDelay } from '../shared/engine.js';
import {
  closeSignal,
  incomingView,
  pathOf,
  sendOutcome,
  setOutcomeHeaders,
} from '../shared/node-io.js';
import type { RateLimitOptions } from '../shared/types.js';

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
 */
export function rateLimit(options: NodeRateLimitOptions): NodeRateLimiter {
  const engine = createEngine(options as RateLimitOptions);
  return async (req, res, next) => {
    const outcome = await engine.decide(incomingView(req, req, pathOf(req.url), undefined));
    if (outcome.action === 'respond') {
      sendOutcome(res, outcome);
      return false;
    }
    setOutcomeHeaders(res, outcome);
    if (outcome.delayMs > 0) {
      const close = closeSignal(res);
      const waited = await queueDelay(outcome.delayMs, close.signal);
      close.dispose();
      if (!waited) return false;
    }
    next?.();
    return true;
  };
}

export type {
  LimitedContext,
  LimitedResponse,
  RateLimitRequest,
  RateLimitRule,
} from '../shared/types.js';
