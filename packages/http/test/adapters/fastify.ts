import Fastify from 'fastify';
import { rateLimit } from '../../src/fastify/index.js';
import { type AppHandle, counter, EXPOSE_BY_APP, type Harness, urlOf } from '../support/harness.js';

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
    await app.listen({ port: 0, host });
    return {
      url: urlOf(app.server.address()),
      handled: handled.count,
      handledAt: handled.times,
      close: () => app.close(),
    };
  },
};
