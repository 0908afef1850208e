import { createServer } from 'node:http';
import { rateLimit } from '../../src/node/index.js';
import { type AppHandle, counter, EXPOSE_BY_APP, type Harness, urlOf } from '../support/harness.js';

export const nodeHarness: Harness = {
  name: 'node',
  knowsRoute: false,
  async build(options) {
    return rateLimit(options);
  },
  async start(options, { host = '127.0.0.1' } = {}): Promise<AppHandle> {
    const limit = rateLimit(options);
    const handled = counter();
    const server = createServer(async (req, res) => {
      if (!(await limit(req, res))) return;
      handled.hit();
      res.setHeader('Access-Control-Expose-Headers', EXPOSE_BY_APP);
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ ok: true }));
    });
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    return {
      url: urlOf(server.address()),
      handled: handled.count,
      handledAt: handled.times,
      close: () =>
        new Promise((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        }),
    };
  },
};
