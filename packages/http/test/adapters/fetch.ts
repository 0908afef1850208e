import type { Http2Bindings, HttpBindings } from '@hono/node-server';
import { rateLimit, rateLimitOf } from '../../src/fetch/index.js';
import type { RateLimitOptions } from '../../src/index.js';
import { type AppHandle, counter, EXPOSE_BY_APP, type Harness } from '../support/harness.js';
import { serveFetch } from './hono.js';

type Bindings = HttpBindings | Http2Bindings;

/**
 * Serves `handler` as a platform would: a Web Request has no socket, and @hono/node-server passes
 * its bindings (the socket) after the request, which the limiter hands to getAddress.
 */
async function serveWith(
  make: (
    getAddress: (request: Request, env: Bindings) => string | undefined,
  ) => (r: Request, env: Bindings) => Promise<Response>,
  host: string,
  handled: ReturnType<typeof counter>,
): Promise<AppHandle> {
  const handler = make((_request, env) => env.incoming.socket.remoteAddress);
  const served = await serveFetch(handler, host);
  return { url: served.url, handled: handled.count, handledAt: handled.times, close: served.close };
}

const decisionOf = (request: Request): Response =>
  Response.json({ decision: rateLimitOf(request) ?? null });

export const fetchHarness: Harness = {
  name: 'fetch',
  knowsRoute: false,
  async build(options) {
    return rateLimit(options);
  },
  async start(options, { host = '127.0.0.1' } = {}): Promise<AppHandle> {
    const handled = counter();
    return serveWith(
      (getAddress) =>
        rateLimit({ ...options, getAddress }).wrap(async (request) => {
          handled.hit();
          if (new URL(request.url).pathname === '/decision') return decisionOf(request);
          if (new URL(request.url).pathname === '/fail') {
            return Response.json({ ok: false }, { status: 500 });
          }
          return Response.json(
            { ok: true },
            { headers: { 'Access-Control-Expose-Headers': EXPOSE_BY_APP } },
          );
        }),
      host,
      handled,
    );
  },
  async startStacked(outer: RateLimitOptions, inner: RateLimitOptions): Promise<AppHandle> {
    const handled = counter();
    return serveWith(
      (getAddress) =>
        rateLimit({ ...outer, getAddress }).wrap(
          rateLimit({ ...inner, getAddress }).wrap(async (request) => {
            handled.hit();
            return decisionOf(request);
          }),
        ),
      '127.0.0.1',
      handled,
    );
  },
};
