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
    // A Web Request has no socket: the platform (here @hono/node-server) supplies the address.
    const addresses = new WeakMap<Request, string | undefined>();
    const limit = rateLimit({ ...options, getAddress: (request) => addresses.get(request) });
    const handled = counter();
    const handler = limit.wrap(async () => {
      handled.hit();
      return Response.json(
        { ok: true },
        { headers: { 'Access-Control-Expose-Headers': EXPOSE_BY_APP } },
      );
    });
    const served = await serveFetch((request: Request, env: HttpBindings | Http2Bindings) => {
      addresses.set(request, env.incoming.socket.remoteAddress);
      return handler(request);
    }, host);
    return {
      url: served.url,
      handled: handled.count,
      handledAt: handled.times,
      close: served.close,
    };
  },
};
