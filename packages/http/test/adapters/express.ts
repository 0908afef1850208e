import type { Server } from 'node:http';
import type { Express, Request, Response } from 'express';
import { rateLimit } from '../../src/express/index.js';
import { type AppHandle, counter, EXPOSE_BY_APP, type Harness, urlOf } from '../support/harness.js';

type ExpressFactory = () => Express;

async function listen(app: Express, host: string): Promise<Server> {
  const server = app.listen(0, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
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

/** The Express harness, for any Express major given its factory. */
export function expressHarness(name: string, express: ExpressFactory): Harness {
  return {
    name,
    knowsRoute: false,
    async build(options) {
      return rateLimit(options);
    },
    async start(options, { host = '127.0.0.1' } = {}): Promise<AppHandle> {
      const app = express();
      const handled = counter();
      const handler = (_req: Request, res: Response): void => {
        handled.hit();
        res.setHeader('Access-Control-Expose-Headers', EXPOSE_BY_APP);
        res.json({ ok: true });
      };
      app.use(rateLimit(options));
      app.get('/', handler);
      app.get('/users/:id', handler);
      app.get('/health', handler);
      app.get('/fail', (_req: Request, res: Response) => {
        handled.hit();
        res.status(500).json({ ok: false });
      });
      app.get('/decision', (req: Request, res: Response) => {
        handled.hit();
        res.json({ decision: req.rateLimit ?? null });
      });
      return handle(await listen(app, host), handled);
    },
    async startStacked(outer, inner): Promise<AppHandle> {
      const app = express();
      const handled = counter();
      app.use(rateLimit(outer));
      app.get('/login', rateLimit(inner), (req: Request, res: Response) => {
        handled.hit();
        res.json({ decision: req.rateLimit ?? null });
      });
      return handle(await listen(app, '127.0.0.1'), handled);
    },
  };
}
