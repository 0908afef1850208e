import { createServer, type RequestListener, type Server } from 'node:http';
import { rateLimit } from '../../src/node/index.js';
import { type AppHandle, counter, EXPOSE_BY_APP, type Harness, urlOf } from '../support/harness.js';

async function serve(listener: RequestListener, host: string): Promise<Server> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return server;
}

function handle(server: Server, handled: ReturnType<typeof counter>): AppHandle {
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
}

export const nodeHarness: Harness = {
  name: 'node',
  knowsRoute: false,
  async build(options) {
    return rateLimit(options);
  },
  async start(options, { host = '127.0.0.1' } = {}): Promise<AppHandle> {
    const limit = rateLimit(options);
    const handled = counter();
    const server = await serve(async (req, res) => {
      if (!(await limit(req, res))) return;
      handled.hit();
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/decision') {
        res.end(JSON.stringify({ decision: req.rateLimit ?? null }));
        return;
      }
      if (req.url === '/fail') {
        res.statusCode = 500;
        res.end(JSON.stringify({ ok: false }));
        return;
      }
      res.setHeader('Access-Control-Expose-Headers', EXPOSE_BY_APP);
      res.end(JSON.stringify({ ok: true }));
    }, host);
    return handle(server, handled);
  },
  async startStacked(outer, inner): Promise<AppHandle> {
    const [first, second] = [rateLimit(outer), rateLimit(inner)];
    const handled = counter();
    const server = await serve(async (req, res) => {
      if (!(await first(req, res))) return;
      if (req.url === '/login' && !(await second(req, res))) return;
      handled.hit();
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ decision: req.rateLimit ?? null }));
    }, '127.0.0.1');
    return handle(server, handled);
  },
};
