import { createLimiter, fixedWindow } from '@floodgate/core';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, test } from 'vitest';
import { rateLimit } from '../src/fastify/index.js';
import { send } from './support/context.js';
import { urlOf } from './support/harness.js';
import { steadyMemoryStore } from './support/stores.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((a) => a.close()));
});

const limiterOf = (name: string, limit: number) =>
  createLimiter({ store: steadyMemoryStore(), policy: fixedWindow({ name, limit, window: '1m' }) });

async function listen(app: FastifyInstance): Promise<string> {
  apps.push(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return urlOf(app.server.address());
}

const statuses = async (url: string, n: number): Promise<number[]> => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await send(url)).status);
  return out;
};

describe('fastify per-route config', () => {
  test('a route can override the limiter or opt out', async () => {
    const app = Fastify();
    await app.register(rateLimit, { limiter: limiterOf('global', 2) });
    app.get('/', async () => 'ok');
    app.get(
      '/strict',
      { config: { floodgate: { limiter: limiterOf('strict', 1), headers: 'draft-6' } } },
      async () => 'ok',
    );
    app.get('/open', { config: { floodgate: false } }, async () => 'ok');
    const url = await listen(app);
    expect(await statuses(`${url}/`, 3)).toEqual([200, 200, 429]);
    const strict = await send(`${url}/strict`);
    expect(strict.headers.get('ratelimit-limit')).toBe('1');
    expect((await send(`${url}/strict`)).status).toBe(429);
    const open = await send(`${url}/open`);
    expect(open.headers.get('ratelimit')).toBeNull();
    expect(await statuses(`${url}/open`, 3)).toEqual([200, 200, 200]);
  });

  test("a route's own policy counts apart from other routes", async () => {
    const app = Fastify();
    const store = steadyMemoryStore();
    await app.register(rateLimit, {
      store,
      policy: fixedWindow({ name: 'base', limit: 1, window: '1m' }),
    });
    const routePolicy = fixedWindow({ name: 'route', limit: 2, window: '1m' });
    app.get('/a', { config: { floodgate: { policy: routePolicy } } }, async () => 'ok');
    app.get('/b', { config: { floodgate: { policy: routePolicy } } }, async () => 'ok');
    const url = await listen(app);
    expect(await statuses(`${url}/a`, 3)).toEqual([200, 200, 429]);
    expect(await statuses(`${url}/b`, 1)).toEqual([200]);
  });

  test('global: false limits only the routes that ask for it', async () => {
    const app = Fastify();
    const store = steadyMemoryStore();
    await app.register(rateLimit, { global: false, store, headers: 'draft-7' });
    app.get('/', async () => 'ok');
    app.get(
      '/limited',
      { config: { floodgate: { policy: fixedWindow({ limit: 1, window: '1m' }) } } },
      async () => 'ok',
    );
    const url = await listen(app);
    expect(await statuses(`${url}/`, 3)).toEqual([200, 200, 200]);
    const first = await send(`${url}/limited`);
    expect(first.headers.get('ratelimit')).toMatch(/^limit=1, remaining=0, reset=\d+$/);
    expect((await send(`${url}/limited`)).status).toBe(429);
  });

  test('routes declared right after an un-awaited register are still limited', async () => {
    const app = Fastify();
    void app.register(rateLimit, { limiter: limiterOf('g', 1) });
    app.get('/', async () => 'ok');
    const url = await listen(app);
    expect(await statuses(`${url}/`, 2)).toEqual([200, 429]);
  });

  test('a bad route config fails at startup, not at the first request', async () => {
    const app = Fastify();
    apps.push(app);
    await app.register(rateLimit, { limiter: limiterOf('g', 1) });
    expect(() =>
      app.get(
        '/x',
        { config: { floodgate: { limiter: limiterOf('x', 1), cost: -1 } } },
        async () => 'ok',
      ),
    ).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});

describe('fastify: plugin store settings and a route limiter', () => {
  test('a route limiter next to a plugin store is fine', async () => {
    const app = Fastify();
    await app.register(rateLimit, {
      global: false,
      store: steadyMemoryStore(),
      onStoreError: 'allow',
    });
    app.get('/', { config: { floodgate: { limiter: limiterOf('own', 1) } } }, async () => 'ok');
    const url = await listen(app);
    expect(await statuses(`${url}/`, 2)).toEqual([200, 429]);
  });
});
