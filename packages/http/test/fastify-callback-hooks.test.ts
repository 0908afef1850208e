// The plugin's hooks are callback-style: what runs around them, in which order, what a denial
// stops, and where a failure goes, on real servers with real requests.
import { createLimiter, fixedWindow } from '@floodgate/core';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, test } from 'vitest';
import { type FastifyRateLimitOptions, rateLimit } from '../src/fastify/index.js';
import { routeConfigOf } from '../src/fastify/limit.js';
import { headerKey } from '../src/index.js';
import { send } from './support/context.js';
import { urlOf } from './support/harness.js';
import { steadyMemoryStore } from './support/stores.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

const limiterOf = (limit: number) =>
  createLimiter({
    store: steadyMemoryStore(),
    policy: fixedWindow({ name: 'api', limit, window: '1m' }),
  });

const base = (limit: number): FastifyRateLimitOptions => ({
  limiter: limiterOf(limit),
  key: headerKey('x-key'),
  validate: { UNVERIFIED_HEADER_KEY: false },
});

/**
 * An app whose own hooks, registered before and after the plugin, note when they ran; the
 * limiter's turn shows as the first hook seeing `request.rateLimit` set.
 */
async function tracedApp(options: FastifyRateLimitOptions) {
  const app = Fastify();
  apps.push(app);
  const trace: string[] = [];
  const note = (name: string) => (request: { rateLimit?: unknown }) => {
    trace.push(`${name}${request.rateLimit === undefined ? '' : '+'}`);
  };
  app.addHook('onRequest', async (request) => note('onRequest:before')(request));
  app.addHook('preHandler', async (request) => note('preHandler:before')(request));
  await app.register(rateLimit, options);
  app.addHook('onRequest', async (request) => note('onRequest:after')(request));
  app.addHook('preHandler', async (request) => note('preHandler:after')(request));
  app.addHook('onResponse', async (request) => note('onResponse')(request));
  app.get('/', async (request) => {
    note('handler')(request);
    return 'ok';
  });
  app.get('/free', { config: { floodgate: false } }, async (request) => {
    note('handler')(request);
    return 'free';
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = urlOf(app.server.address());
  return {
    async run(path: string, key = 'k') {
      trace.length = 0;
      const reply = await send(`${url}${path}`, { 'x-key': key });
      // onResponse runs after the last byte was handed over: wait for it.
      for (
        let i = 0;
        i < 50 && !trace.includes('onResponse') && !trace.includes('onResponse+');
        i++
      ) {
        await new Promise((r) => setTimeout(r, 5));
      }
      return { reply, trace: [...trace] };
    },
  };
}

describe('fastify callback hooks', () => {
  test("'onRequest': between the app's onRequest hooks; a 429 stops every later hook and the handler", async () => {
    const app = await tracedApp(base(1));
    const ok = await app.run('/');
    expect(ok.reply.status).toBe(200);
    expect(ok.trace).toEqual([
      'onRequest:before',
      'onRequest:after+',
      'preHandler:before+',
      'preHandler:after+',
      'handler+',
      'onResponse+',
    ]);
    const denied = await app.run('/');
    expect(denied.reply.status).toBe(429);
    expect(denied.reply.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(denied.trace).toEqual(['onRequest:before', 'onResponse+']);
  });

  test("'preHandler': after the app's earlier preHandler hooks; a 429 stops the later ones", async () => {
    const app = await tracedApp({ ...base(1), hook: 'preHandler' });
    const ok = await app.run('/');
    expect(ok.reply.status).toBe(200);
    expect(ok.reply.headers.get('ratelimit')).toMatch(/^"api";r=0;t=\d+$/);
    expect(ok.trace).toEqual([
      'onRequest:before',
      'onRequest:after',
      'preHandler:before',
      'preHandler:after+',
      'handler+',
      'onResponse+',
    ]);
    const denied = await app.run('/');
    expect(denied.reply.status).toBe(429);
    expect(denied.trace).toEqual([
      'onRequest:before',
      'onRequest:after',
      'preHandler:before',
      'onResponse+',
    ]);
  });

  test('an exempt route goes through both hooks untouched', async () => {
    for (const hook of ['onRequest', 'preHandler'] as const) {
      const app = await tracedApp({ ...base(1), hook });
      for (let i = 0; i < 3; i++) {
        const free = await app.run('/free');
        expect(free.reply.status).toBe(200);
        expect(free.reply.text).toBe('free');
        expect(free.reply.headers.get('ratelimit')).toBeNull();
        expect(free.reply.headers.get('access-control-expose-headers')).toBeNull();
        expect(free.trace).toHaveLength(6);
      }
    }
  });

  test('many concurrent requests each get their own decision', async () => {
    const app = await tracedApp(base(2));
    const replies = await Promise.all(
      Array.from({ length: 30 }, (_, i) => app.run('/', `key-${i % 10}`)),
    );
    const statuses = replies.map((r) => r.reply.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);
  });
});

describe('fastify callback hooks: failures', () => {
  async function appWith(options: FastifyRateLimitOptions) {
    const app = Fastify();
    apps.push(app);
    const handled: unknown[] = [];
    app.setErrorHandler((error, _request, reply) => {
      handled.push(error);
      return reply.code(500).send({ handledBy: 'app', code: (error as { code?: string }).code });
    });
    await app.register(rateLimit, options);
    let reached = 0;
    app.get('/', async () => {
      reached++;
      return 'ok';
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { url: urlOf(app.server.address()), handled, reached: () => reached };
  }

  test("a reply Fastify refuses (an onLimited status out of range) reaches the app's error handler", async () => {
    for (const hook of ['onRequest', 'preHandler'] as const) {
      const app = await appWith({
        ...base(1),
        hook,
        onLimited: () => ({ status: 1000, body: 'x' }),
      });
      expect((await send(app.url, { 'x-key': 'a' })).status).toBe(200);
      const failed = await send(app.url, { 'x-key': 'a' });
      expect(failed.status).toBe(500);
      expect(failed.json()).toEqual({ handledBy: 'app', code: 'FST_ERR_BAD_STATUS_CODE' });
      expect(app.handled).toHaveLength(1);
      expect(app.reached()).toBe(1);
    }
  });

  test('a key that throws is the limiter’s own 503 (fail-closed), not the app’s error handler', async () => {
    const errors: unknown[] = [];
    const app = await appWith({
      limiter: limiterOf(5),
      key: () => {
        throw new Error('no key today');
      },
      onError: (error) => {
        errors.push(error);
      },
    });
    const reply = await send(app.url);
    expect(reply.status).toBe(503);
    expect(reply.json()).toMatchObject({ status: 503, title: 'Service Unavailable' });
    expect(errors).toHaveLength(1);
    expect(app.handled).toHaveLength(0);
    expect(app.reached()).toBe(0);
  });

  test("with 'fail-open', a key that throws lets the request through, once, to the handler", async () => {
    const app = await appWith({
      limiter: limiterOf(5),
      key: async () => {
        throw new Error('no key today');
      },
      onLimiterError: 'fail-open',
      onError: () => {},
    });
    const reply = await send(app.url);
    expect(reply.status).toBe(200);
    expect(reply.text).toBe('ok');
    expect(reply.headers.get('ratelimit')).toBeNull();
    expect(app.reached()).toBe(1);
  });
});

describe("fastify callback hooks: the route's config", () => {
  test("is read from Fastify's route context, or from routeOptions for a request without one", async () => {
    const app = await tracedApp(base(5));
    // A real request first: the plugin has found Fastify's context symbol by then.
    expect((await app.run('/')).reply.status).toBe(200);
    const config = { url: '/other', method: 'GET' };
    // What a request of another copy of Fastify looks like to it: no context under that symbol.
    const foreign = { routeOptions: { config } } as unknown as FastifyRequest;
    expect(routeConfigOf(foreign)).toBe(config);
  });
});
