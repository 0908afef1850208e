import type { Http2Bindings, HttpBindings } from '@hono/node-server';
import { rateLimit, rateLimitOf } from '../../src/fetch/index.js';
import type { RateLimitOptions } from '../../src/index.js';
import { type AppHandle, counter, EXPOSE_BY_APP, type Harness } from '../support/harness.js';
import { serveFetch } from './hono.js';

/** Serves `handler` with the socket's address handed to it, as a platform would. */
async function serveWith(
  make: (getAddress: (request: Request) => string | undefined) => (r: Request) => Promise<Response>,
  host: string,
  handled: ReturnType<typeof counter>,
): Promise<AppHandle> {
  // A Web Request has no socket: the platform (here @hono/node-server) supplies the address.
  const addresses = new WeakMap<Request, string | undefined>();
  const handler = make((request) => addresses.get(request));
  const served = await serveFetch((request: Request, env: HttpBindings | Http2Bindings) => {
    addresses.set(request, env.incoming.socket.remoteAddress);
    return handler(request);
  }, host);
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
