/**
 * `@floodgate/http/fastify`: the 429 contract as a Fastify 5 plugin with per-route config.
 * Fastify itself is never imported at run time; only its types are.
 */

import type { Decision } from '@floodgate/core';
import type {
  FastifyInstance,
  FastifyPluginAsync,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
  RouteOptions,
} from 'fastify';
import {
  type ConcurrencyLimitOptions,
  createConcurrencyEngine,
  EXPOSE as EXPOSE_HEADER,
} from '../shared/concurrency.js';
import { tieRelease } from '../shared/concurrency-io.js';
import { createEngine } from '../shared/engine.js';
import { incomingView, pathOf } from '../shared/node-io.js';
import { BUILD_OPTIONS } from '../shared/options.js';
import { mergeExposeHeaders } from '../shared/response.js';
import type { RateLimitOptions } from '../shared/types.js';
import { checkHook, type FastifyHook } from './hook.js';
import {
  frameworkOf,
  type Limited,
  limitRequest,
  mergeExposeOnSend,
  type RouteLimit,
  routeConfigOf,
} from './limit.js';

/**
 * Options of a route's `config.floodgate`: override any plugin option for that route.
 * @example
 * A stricter limit on one route, by IP whatever the plugin's key.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { ipKey } from '@floodgate/http';
 * import type { FastifyRouteRateLimitOptions } from '@floodgate/http/fastify';
 * import type { FastifyInstance } from 'fastify';
 *
 * declare const app: FastifyInstance;
 * declare const loginLimiter: Limiter;
 * const strict: FastifyRouteRateLimitOptions = { limiter: loginLimiter, key: ipKey() };
 * app.post('/login', { config: { floodgate: strict } }, async () => 'ok');
 * ```
 * @public
 */
export interface FastifyRouteRateLimitOptions extends RateLimitOptions<FastifyRequest> {
  /**
   * The Fastify hook the limit runs in. `'onRequest'` answers a denied request before its body
   * is read; `'preHandler'` runs after the app's own `preHandler` hooks registered before the
   * plugin (authentication, say), so a key can read what they set on the request. A route's
   * `config.floodgate.hook` overrides the plugin's. @default 'onRequest'
   * @example
   * Count signed-in users by their id, set by an authentication hook.
   * ```ts
   * import type { Limiter } from '@floodgate/core';
   * import { firstKey, ipKey, type KeyFunction } from '@floodgate/http';
   * import { rateLimit } from '@floodgate/http/fastify';
   * import Fastify, { type FastifyRequest } from 'fastify';
   *
   * declare const limiter: Limiter;
   * declare function authenticate(request: FastifyRequest): Promise<string | undefined>;
   * const app = Fastify();
   * app.decorateRequest('userId', undefined);
   * app.addHook('preHandler', async (request) => {
   *   (request as FastifyRequest & { userId?: string }).userId = await authenticate(request);
   * });
   * const userKey: KeyFunction = (request) => {
   *   const id = (request.raw as FastifyRequest & { userId?: string }).userId;
   *   return id === undefined ? undefined : `user:${id}`;
   * };
   * await app.register(rateLimit, { limiter, hook: 'preHandler', key: firstKey(userKey, ipKey()) });
   * ```
   */
  hook?: FastifyHook;
}

/**
 * Options of the Fastify plugin: the shared options (`raw` is Fastify's `request`), which are
 * also the defaults of every route's `config.floodgate`, and `global`.
 * @example
 * Only the routes that ask for it are limited.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { type FastifyRateLimitOptions, rateLimit } from '@floodgate/http/fastify';
 * import type { FastifyInstance } from 'fastify';
 *
 * declare const app: FastifyInstance;
 * declare const limiter: Limiter;
 * const options: FastifyRateLimitOptions = { limiter, global: false };
 * await app.register(rateLimit, options);
 * app.get('/export', { config: { floodgate: {} } }, async () => 'csv');
 * ```
 * @public
 */
export interface FastifyRateLimitOptions extends FastifyRouteRateLimitOptions {
  /**
   * Limit every route. With `false`, only routes whose `config.floodgate` is set are limited
   * (the plugin options are then defaults for those). @default true
   */
  global?: boolean;
}

// A key of our own: `rateLimit` is @fastify/rate-limit's, and two declarations of it with
// different types do not compile side by side (TS2717) during a migration.
declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false` exempts the route; an object overrides the plugin's options for it. */
    floodgate?: false | FastifyRouteRateLimitOptions;
  }
  interface FastifyRequest {
    /**
     * The rate-limit decision, set by `@floodgate/http/fastify`: every limiter that ran on the
     * request, merged (what its headers report). Absent when none decided.
     */
    rateLimit?: Decision;
  }
}

type RouteConfig = false | FastifyRouteRateLimitOptions | undefined;
let warnedLegacyKey = false;

/**
 * The route's options: `config.floodgate`, or the key earlier versions read, `config.rateLimit`,
 * unless @fastify/rate-limit is registered (then that key is its own).
 */
function routeConfig(fastify: FastifyInstance, config: unknown): RouteConfig {
  const c = config as { floodgate?: RouteConfig; rateLimit?: RouteConfig } | undefined;
  if (c?.floodgate !== undefined || c?.rateLimit === undefined) return c?.floodgate;
  if (fastify.hasDecorator('rateLimit')) return undefined;
  if (!warnedLegacyKey) {
    warnedLegacyKey = true;
    process.emitWarning(
      'route config.rateLimit is deprecated for @floodgate/http/fastify: use config.floodgate (config.rateLimit belongs to @fastify/rate-limit, and is ignored once that plugin is registered)',
      { type: 'DeprecationWarning', code: 'FLOODGATE_FASTIFY_CONFIG_KEY' },
    );
  }
  return c.rateLimit;
}

/** A route's own limiter choice replaces the plugin's, rather than conflicting with it. */
function mergeRoute(
  base: FastifyRouteRateLimitOptions,
  route: FastifyRouteRateLimitOptions,
  url: string,
): FastifyRouteRateLimitOptions {
  const merged: FastifyRouteRateLimitOptions = { ...base };
  if (route.limiter !== undefined || route.policy !== undefined || route.rules !== undefined) {
    delete merged.limiter;
    delete merged.policy;
    delete merged.rules;
    // The route brings its own limiter: the plugin's store settings do not apply to it.
    if (route.limiter !== undefined) {
      for (const name of BUILD_OPTIONS) delete merged[name];
    }
    // A route's own policy counts apart from other routes with the same policy and key.
    if (route.policy !== undefined && route.prefix === undefined) {
      merged.prefix = `${base.prefix ?? 'floodgate'}:${url.replace(/[{}]/g, '_')}`;
    }
  }
  return { ...merged, ...route };
}

const routeId = (method: string | readonly string[] | undefined, url: string | undefined): string =>
  `${Array.isArray(method) ? method.join(',') : String(method)} ${String(url)}`;

const plugin: FastifyPluginAsync<FastifyRateLimitOptions> = async (
  fastify: FastifyInstance,
  options,
) => {
  const { global = true, hook: baseHook, ...base } = options;
  const hook = checkHook(baseHook, '');
  const globalEngine: Limited | undefined = global
    ? { engine: createEngine(base as RateLimitOptions), hook }
    : undefined;
  const routeEngines = new Map<string, Limited>();
  // Until some route limits in preHandler, that hook returns at once.
  let preHandlerUsed = hook === 'preHandler';

  const engineFor = (
    config: false | FastifyRouteRateLimitOptions | undefined,
    method: string | readonly string[] | undefined,
    url: string | undefined,
  ): Limited | undefined => {
    if (config === false) return undefined;
    if (config === undefined) return globalEngine;
    const id = routeId(method, url);
    let limited = routeEngines.get(id);
    if (limited === undefined) {
      const { hook: routeHook, ...route } = config;
      limited = {
        engine: createEngine(mergeRoute(base, route, String(url)) as RateLimitOptions),
        hook: routeHook === undefined ? hook : checkHook(routeHook, `${id}: config.floodgate.`),
      };
      routeEngines.set(id, limited);
      if (limited.hook === 'preHandler') preHandlerUsed = true;
    }
    return limited;
  };

  // Shaped like every request from the start (Fastify's advice), once even if registered twice.
  if (!fastify.hasRequestDecorator('rateLimit')) fastify.decorateRequest('rateLimit', undefined);

  // Route options are checked as routes are declared, so a bad one fails at startup.
  fastify.addHook('onRoute', (routeOptions: RouteOptions) => {
    engineFor(routeConfig(fastify, routeOptions.config), routeOptions.method, routeOptions.url);
  });

  // Per route (Fastify's per-route config object, which lives as long as the route): its limit,
  // or null when it has none. Requests only come once every plugin is loaded, so what a route's
  // options resolve to no longer changes.
  const routeLimits = new WeakMap<object, RouteLimit | null>();
  const limitOf = (request: FastifyRequest): RouteLimit | undefined => {
    const config = routeConfigOf(request);
    if (config === undefined || config === null) {
      const limited = engineFor(routeConfig(fastify, config), undefined, undefined);
      return limited && { limited, framework: frameworkOf(request.server), route: undefined };
    }
    let limit = routeLimits.get(config);
    if (limit === undefined) {
      const limited = engineFor(routeConfig(fastify, config), config.method, config.url);
      limit = limited
        ? { limited, framework: frameworkOf(request.server), route: config.url }
        : null;
      routeLimits.set(config, limit);
    }
    return limit ?? undefined;
  };

  // One app-wide hook (not one per route), so routes declared before the plugin finished
  // loading, e.g. after an un-awaited register, are limited too.
  // Both hooks are added; each route's limit runs in the one its options name. Callback-style
  // hooks: a request that is not limited here goes on at once, without a promise.
  const limitIn = (when: FastifyHook) =>
    function floodgateRateLimit(
      request: FastifyRequest,
      reply: FastifyReply,
      done: HookHandlerDoneFunction,
    ): void {
      if (when === 'preHandler' && !preHandlerUsed) {
        done();
        return;
      }
      let limit: RouteLimit | undefined;
      try {
        limit = limitOf(request);
      } catch (error) {
        done(error as Error);
        return;
      }
      if (limit === undefined || limit.limited.hook !== when) {
        done();
        return;
      }
      limitRequest(limit, request, reply, done);
    };
  fastify.addHook('onRequest', limitIn('onRequest'));
  fastify.addHook('preHandler', limitIn('preHandler'));
  fastify.addHook('onSend', mergeExposeOnSend);
};

// What fastify-plugin does: hooks apply to the whole app, not only inside the plugin's scope.
Object.assign(plugin, {
  [Symbol.for('skip-override')]: true,
  [Symbol.for('fastify.display-name')]: '@floodgate/http',
});

/**
 * The Fastify plugin: limits every route (unless `global: false`); per-route
 * `config: { floodgate: false | {...} }` exempts a route or overrides options for it.
 * Bad options are rejected (`FloodgateError('INVALID_OPTION')`) when the plugin or the route
 * is registered.
 * @example
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { rateLimit } from '@floodgate/http/fastify';
 * import Fastify from 'fastify';
 *
 * declare const limiter: Limiter;
 * declare const searchLimiter: Limiter;
 * const app = Fastify();
 * await app.register(rateLimit, { limiter });
 * app.get('/search', { config: { floodgate: { limiter: searchLimiter } } }, async () => []);
 * app.get('/health', { config: { floodgate: false } }, async () => 'ok');
 * ```
 * @public
 */
export const rateLimit = plugin;

/**
 * A Fastify `onRequest` hook limiting requests in flight per identity: add it app-wide
 * (`addHook`) or to a route (`onRequest`). It acquires a lease before the handler and releases
 * it when the response finished or the connection closed; a denial is a 429 (or `status: 503`)
 * with `Retry-After`. Throws `FloodgateError('INVALID_OPTION')` on bad options, when called.
 * @example
 * ```ts
 * import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
 * import { concurrencyLimit } from '@floodgate/http/fastify';
 * import { MemoryStore } from '@floodgate/memory';
 * import Fastify from 'fastify';
 *
 * const limiter = createConcurrencyLimiter({ store: new MemoryStore(), limit: 5, leaseMs: '1m' });
 * const app = Fastify();
 * app.post('/export', { onRequest: concurrencyLimit({ limiter }) }, async () => 'ok');
 * ```
 * @public
 */
export function concurrencyLimit(
  options: ConcurrencyLimitOptions<FastifyRequest>,
): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined> {
  const enter = createConcurrencyEngine(options as ConcurrencyLimitOptions);
  return async function floodgateConcurrencyLimit(request, reply) {
    const path = pathOf(request.url);
    const route = request.routeOptions?.url;
    const framework = frameworkOf(request.server);
    const admission = await enter(incomingView(request.raw, request, path, route, framework));
    if (admission.action === 'respond') {
      // What CORS that ran first exposed stays exposed, beside Retry-After.
      const given = reply.getHeader(EXPOSE_HEADER);
      const own = admission.headers[EXPOSE_HEADER];
      const headers =
        typeof given === 'string' && own !== undefined
          ? {
              ...admission.headers,
              [EXPOSE_HEADER]: mergeExposeHeaders(given, own.split(/\s*,\s*/)),
            }
          : admission.headers;
      return reply.code(admission.status).headers(headers).send(admission.body);
    }
    if (tieRelease(reply.raw, admission.release)) return undefined;
    // The client left while the lease was acquired: Fastify runs nothing more for it.
    reply.hijack();
    reply.raw.destroy();
    return reply;
  };
}

export type { ConcurrencyLimitOptions } from '../shared/concurrency.js';
export type {
  LimitedContext,
  LimitedResponse,
  RateLimitRequest,
  RateLimitRule,
} from '../shared/types.js';
export type { FastifyHook } from './hook.js';
