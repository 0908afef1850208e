import Fastify, { type FastifyInstance } from 'fastify';
import { rateLimit } from '../../src/fastify/index.js';
import { type AppHandle, counter, EXPOSE_BY_APP, type Harness, urlOf } from '../support/harness.js';

async function listen(
  app: FastifyInstance,
  host: string,
  handled: ReturnType<typeof counter>,
): Promise<AppHandle> {
  await app.listen({ port: 0, host });
  return {
    url: urlOf(app.server.address()),
    handled: handled.count,
    handledAt: handled.times,
    close: () => app.close(),
  };
}

export const fastifyHarness: Harness = {
  name: 'fastify',
  knowsRoute: true,
  async build(options) {
    const app = Fastify();
    try {
      await app.register(rateLimit, options);
      await app.ready();
    } finally {
      await app.close();
    }
  },
  async start(options, { host = '127.0.0.1' } = {}): Promise<AppHandle> {
    const app = Fastify();
    const handled = counter();
    await app.register(rateLimit, options);
    const handler = async (_req: unknown, reply: import('fastify').FastifyReply) => {
      handled.hit();
      reply.header('Access-Control-Expose-Headers', EXPOSE_BY_APP);
      return { ok: true };
    };
    app.get('/', handler);
    app.get('/users/:id', handler);
    app.get('/health', handler);
    app.get('/fail', async (_req, reply) => {
      handled.hit();
      return reply.code(500).send({ ok: false });
    });
    app.get('/decision', async (request) => {
      handled.hit();
      return { decision: request.rateLimit ?? null };
    });
    return listen(app, host, handled);
  },
  async startStacked(outer, inner): Promise<AppHandle> {
    // Two registrations: both hooks run on every route, outer first, as two plugins would.
    const app = Fastify();
    const handled = counter();
    await app.register(rateLimit, outer);
    await app.register(rateLimit, inner);
    app.get('/login', async (request) => {
      handled.hit();
      return { decision: request.rateLimit ?? null };
    });
    return listen(app, '127.0.0.1', handled);
  },
};
