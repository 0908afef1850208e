import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { type RateLimitEnv, rateLimit } from '../../src/hono/index.js';
import { type AppHandle, counter, EXPOSE_BY_APP, type Harness, urlOf } from '../support/harness.js';

/** Serves a fetch handler with @hono/node-server on port 0. */
export async function serveFetch(
  fetch: Parameters<typeof serve>[0]['fetch'],
  host: string,
): Promise<{ url: string; close: () => Promise<void> }> {
  let server: ReturnType<typeof serve> | undefined;
  const info = await new Promise<AddressInfo>((resolve) => {
    server = serve({ fetch, port: 0, hostname: host }, resolve);
  });
  return {
    url: urlOf(info),
    close: () =>
      new Promise((resolve) => {
        server!.close(() => resolve());
        // Keep-alive sockets would hold close() open.
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}

const served: { close(): Promise<void> }[] = [];

/**
 * `serveFetch` on loopback, closed by `closeServed` (a test file's `afterEach`): for tests that
 * serve handlers of their own rather than a harness app.
 */
export async function serveLoopback(fetch: Parameters<typeof serveFetch>[0]): Promise<string> {
  const server = await serveFetch(fetch, '127.0.0.1');
  served.push(server);
  return server.url;
}

/** Closes every server `serveLoopback` started. */
export async function closeServed(): Promise<void> {
  await Promise.all(served.splice(0).map((s) => s.close()));
}

async function listen(
  app: Hono<RateLimitEnv>,
  host: string,
  handled: ReturnType<typeof counter>,
): Promise<AppHandle> {
  const served = await serveFetch(app.fetch, host);
  return {
    url: served.url,
    handled: handled.count,
    handledAt: handled.times,
    close: served.close,
  };
}

export const honoHarness: Harness = {
  name: 'hono',
  knowsRoute: true,
  async build(options) {
    return rateLimit(options);
  },
  async start(options, { host = '127.0.0.1' } = {}): Promise<AppHandle> {
    const app = new Hono<RateLimitEnv>();
    const handled = counter();
    app.use('*', rateLimit(options));
    const handler = (c: import('hono').Context) => {
      handled.hit();
      c.header('Access-Control-Expose-Headers', EXPOSE_BY_APP);
      return c.json({ ok: true });
    };
    app.get('/', handler);
    app.get('/users/:id', handler);
    app.get('/health', handler);
    app.get('/fail', (c) => {
      handled.hit();
      return c.json({ ok: false }, 500);
    });
    app.get('/decision', (c) => {
      handled.hit();
      return c.json({ decision: c.get('rateLimit') ?? null });
    });
    return listen(app, host, handled);
  },
  async startStacked(outer, inner): Promise<AppHandle> {
    const app = new Hono<RateLimitEnv>();
    const handled = counter();
    app.use('*', rateLimit(outer));
    app.use('/login', rateLimit(inner));
    app.get('/login', (c) => {
      handled.hit();
      return c.json({ decision: c.get('rateLimit') ?? null });
    });
    return listen(app, '127.0.0.1', handled);
  },
};
