import { createLimiter, fixedWindow, isFloodgateError } from '@floodgate/core';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { afterEach, describe, expect, test } from 'vitest';
import { type FastifyRateLimitOptions, rateLimit } from '../src/fastify/index.js';
import { ipKey, type KeyFunction } from '../src/index.js';
import { send } from './support/context.js';
import { urlOf } from './support/harness.js';
import { steadyMemoryStore } from './support/stores.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

const limiterOf = (name: string, limit: number) =>
  createLimiter({ store: steadyMemoryStore(), policy: fixedWindow({ name, limit, window: '1m' }) });

type Authed = FastifyRequest & { user?: { id: string } };

/** Reads what the authentication hook set on Fastify's request. */
const userKey: KeyFunction<FastifyRequest> = (request) => {
  const user = (request.raw as Authed).user;
  return user === undefined ? undefined : `user:${user.id}`;
};

/** An app whose authentication runs as a preHandler hook, registered before the plugin. */
async function authedApp(options: FastifyRateLimitOptions): Promise<{
  url: string;
  handled: () => number;
}> {
  const app = Fastify();
  apps.push(app);
  let handled = 0;
  app.decorateRequest('user', undefined);
  app.addHook('preHandler', async (request, reply) => {
    const token = request.headers.authorization?.replace(/^Bearer /, '');
    if (token === undefined) return reply.code(401).send('who are you?');
    (request as Authed).user = { id: token };
  });
  await app.register(rateLimit, options);
  app.get('/me', async (request) => {
    handled++;
    return { user: (request as Authed).user?.id };
  });
  app.get(
    '/open',
    { config: { floodgate: { hook: 'onRequest', limiter: limiterOf('ip', 1), key: ipKey() } } },
    async () => 'ok',
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: urlOf(app.server.address()), handled: () => handled };
}

const as = (user: string) => ({ authorization: `Bearer ${user}` });

async function refusal(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
  } catch (error) {
    if (isFloodgateError(error)) return `${error.code}: ${error.message}`;
    throw error;
  }
  throw new Error('expected the options to be refused');
}

describe('fastify hook option', () => {
  test("with 'preHandler', the key reads the user that authentication set", async () => {
    const app = await authedApp({
      limiter: limiterOf('per-user', 1),
      hook: 'preHandler',
      key: userKey,
    });
    const first = await send(`${app.url}/me`, as('alice'));
    expect(first.status).toBe(200);
    expect(first.json()).toEqual({ user: 'alice' });
    expect(first.headers.get('ratelimit')).toMatch(/^"per-user";r=0;t=\d+$/);
    const denied = await send(`${app.url}/me`, as('alice'));
    expect(denied.status).toBe(429);
    expect(denied.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(denied.json()).toMatchObject({ status: 429, violated: ['per-user'] });
    // Another user, same address: a bucket of its own.
    expect((await send(`${app.url}/me`, as('bob'))).status).toBe(200);
    expect(app.handled()).toBe(2);
    // Authentication answers first: the limiter never saw the anonymous request.
    expect((await send(`${app.url}/me`)).status).toBe(401);
  });

  test("by default ('onRequest') the limit runs before authentication has set anything", async () => {
    const app = await authedApp({ limiter: limiterOf('per-user', 1), key: userKey });
    for (let i = 0; i < 3; i++) {
      const r = await send(`${app.url}/me`, as('alice'));
      expect(r.status).toBe(200);
      // No user yet when the key ran: the rule did not apply.
      expect(r.headers.get('ratelimit')).toBeNull();
    }
  });

  test("a route's config.floodgate.hook overrides the plugin's", async () => {
    const app = await authedApp({
      limiter: limiterOf('per-user', 5),
      hook: 'preHandler',
      key: userKey,
    });
    // /open limits per IP at onRequest, before authentication: anonymous requests are counted.
    const first = await send(`${app.url}/open`);
    expect(first.status).toBe(401);
    expect(first.headers.get('ratelimit')).toMatch(/^"ip";r=0;t=\d+$/);
    expect((await send(`${app.url}/open`)).status).toBe(429);
  });

  test('a hook that is not onRequest or preHandler is refused, on the plugin or a route', async () => {
    const plugin = Fastify();
    apps.push(plugin);
    expect(
      await refusal(async () => {
        await plugin.register(rateLimit, {
          limiter: limiterOf('x', 1),
          hook: 'preValidation' as never,
        });
        await plugin.ready();
      }),
    ).toBe(`INVALID_OPTION: hook must be 'onRequest' or 'preHandler', got "preValidation"`);
    const route = Fastify();
    apps.push(route);
    await route.register(rateLimit, { limiter: limiterOf('x', 1) });
    expect(
      await refusal(async () => {
        route.get('/', { config: { floodgate: { hook: 'onSend' as never } } }, async () => 'ok');
        await route.ready();
      }),
    ).toMatch(
      /^INVALID_OPTION: GET \/: config\.floodgate\.hook must be 'onRequest' or 'preHandler'/,
    );
  });
});
