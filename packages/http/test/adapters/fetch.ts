import type { Http2Bindings, HttpBindings } from '@hono/node-server';
import { rateLimit } from '../../src/fetch/index.js';
import { type AppHandle, counter, EXPOSE_BY_APP, type Harness } from '../support/harness.js';
import { serveFetch } from './hono.js';

export const fetchHarness: Harness = {
  name: 'fetch',
  knowsRoute: false,
  async build(options) {
    return rateLimit(options);
  },
  async start(options, { host = '127.0.0.1' } = {}): Promise<AppHandle> {
    // A Web Request has no socket: the platform (here @hono/node-server) passes the address in
    // its handler's second argument, which the limiter hands to getAddress.
    const limit = rateLimit({
      ...options,
      getAddress: (_request, env: HttpBindings | Http2Bindings) =>
        env.incoming.socket.remoteAddress,
    });
    const handled = counter();
    const handler = limit.wrap(async () => {
      handled.hit();
      return Response.json(
        { ok: true },
        { headers: { 'Access-Control-Expose-Headers': EXPOSE_BY_APP } },
      );
    });
    const served = await serveFetch(handler, host);
    return {
      url: served.url,
      handled: handled.count,
      handledAt: handled.times,
      close: served.close,
    };
  },
};
