// routeKey() must name the handler that will run: one handler, one bucket, however the request
// target is spelled. Real servers, raw requests (absolute-form targets cannot be sent by fetch).
import { createServer } from 'node:http';
import { createLimiter, fixedWindow, type Limiter } from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import express from 'express';
import express4 from 'express4';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, test } from 'vitest';
import { rateLimit as expressLimit } from '../src/express/index.js';
import { rateLimit as fastifyLimit } from '../src/fastify/index.js';
import { rateLimit as honoLimit } from '../src/hono/index.js';
import { type KeyFunction, routeKey } from '../src/index.js';
import { rateLimit as nodeLimit } from '../src/node/index.js';
import { serveFetch } from './adapters/hono.js';
import { T0 } from './support/context.js';
import { counter, urlOf } from './support/harness.js';
import { rawRequest } from './support/raw.js';

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

function limitOf3(): Limiter {
  return createLimiter({
    store: new MemoryStore({ now: () => T0 }),
    policy: fixedWindow({ name: 'search', limit: 3, window: '1m' }),
  });
}

function recording(): { key: KeyFunction; seen: Set<string | undefined> } {
  const seen = new Set<string | undefined>();
  const inner = routeKey();
  return {
    seen,
    key: async (request) => {
      const value = await inner(request);
      seen.add(value);
      return value;
    },
  };
}

/** Every spelling of one handler, three times over: without one bucket, each would get 3. */
function spellings(prefix: string): [method: string, target: string][] {
  const once: [string, string][] = [
    ['GET', `${prefix}/search`],
    ['GET', `${prefix}/Search`],
    ['GET', `${prefix}/SEARCH`],
    ['GET', `${prefix}/search/`],
    ['GET', `http://anything${prefix}/search`],
    ['GET', `http://another.example${prefix}/search?q=1`],
    ['HEAD', `${prefix}/search`],
    ['GET', `${prefix}/./search`],
  ];
  return [...once, ...once, ...once];
}

async function hammer(url: string, prefix = ''): Promise<number[]> {
  const statuses: number[] = [];
  for (const [method, target] of spellings(prefix)) {
    statuses.push(await rawRequest(url, method, target));
  }
  return statuses;
}

async function expressApp(
  factory: typeof express,
  mount: 'app-wide' | 'router',
  key: KeyFunction,
): Promise<{ url: string; handled: () => number }> {
  const app = factory();
  const handled = counter();
  const handler = (_req: express.Request, res: express.Response): void => {
    handled.hit();
    res.send('results');
  };
  const limit = expressLimit({ limiter: limitOf3(), key, validate: false });
  if (mount === 'app-wide') {
    app.use(limit);
    app.get('/search', handler);
  } else {
    const router = factory.Router();
    router.get('/search', limit, handler);
    app.use('/api', router);
  }
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  open.push(
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return { url: urlOf(server.address()), handled: handled.count };
}

describe.each([
  ['express 5', express],
  ['express 4', express4 as unknown as typeof express],
])('routeKey on %s', (_name, factory) => {
  test('app-wide: case, trailing slash, absolute-form, dot segments and HEAD are one bucket', async () => {
    const rec = recording();
    const app = await expressApp(factory, 'app-wide', rec.key);
    const statuses = await hammer(app.url);
    expect(app.handled()).toBe(3);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect(statuses.slice(3).every((s) => s === 429)).toBe(true);
    expect([...rec.seen]).toEqual(['route:GET /search']);
  });

  test('on a route of a Router mounted at /api: the mount path in any case is one bucket', async () => {
    const rec = recording();
    const app = await expressApp(factory, 'router', rec.key);
    const statuses: number[] = [];
    for (const target of ['/api/search', '/API/search', '/Api/Search/', '/aPi/search']) {
      for (const method of ['GET', 'HEAD'])
        statuses.push(await rawRequest(app.url, method, target));
    }
    statuses.push(await rawRequest(app.url, 'GET', 'http://x/API/search'));
    expect(app.handled()).toBe(3);
    expect(statuses.filter((s) => s === 200)).toHaveLength(3);
    expect([...rec.seen]).toEqual(['route:GET /api/search']);
  });

  test('case-sensitive and strict routing keep their own buckets', async () => {
    const app = factory();
    app.set('case sensitive routing', true);
    app.set('strict routing', true);
    const rec = recording();
    app.use(expressLimit({ limiter: limitOf3(), key: rec.key, validate: false }));
    app.use((_req: express.Request, res: express.Response) => void res.send('x'));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    open.push(() => new Promise((resolve) => void server.close(() => resolve())));
    const url = urlOf(server.address());
    for (const target of ['/search', '/Search', '/search/', 'http://h/search']) {
      await rawRequest(url, 'GET', target);
    }
    expect([...rec.seen]).toEqual(['route:GET /search', 'route:GET /Search', 'route:GET /search/']);
  });
});

test('routeKey on node:http: the canonical path, HEAD as GET', async () => {
  const limit = nodeLimit({ limiter: limitOf3(), key: routeKey(), validate: false });
  const handled = counter();
  const server = createServer(async (req, res) => {
    if (!(await limit(req, res))) return;
    handled.hit();
    res.end('results');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push(
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const statuses = await hammer(urlOf(server.address()));
  expect(handled.count()).toBe(3);
  expect(statuses.slice(3).every((s) => s === 429)).toBe(true);
});

test('routeKey on Fastify: HEAD runs the GET handler and counts with it', async () => {
  const app = Fastify();
  const handled = counter();
  const rec = recording();
  await app.register(fastifyLimit, { limiter: limitOf3(), key: rec.key, validate: false });
  app.get('/search', async () => {
    handled.hit();
    return 'results';
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  open.push(() => app.close());
  const url = urlOf(app.server.address());
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) {
    for (const method of ['GET', 'HEAD']) statuses.push(await rawRequest(url, method, '/search'));
  }
  expect(handled.count()).toBe(3);
  expect(statuses.filter((s) => s === 200)).toHaveLength(3);
  expect([...rec.seen]).toEqual(['route:GET /search']);
});

test('routeKey on Hono: the matched route, HEAD as GET', async () => {
  const app = new Hono();
  const handled = counter();
  const rec = recording();
  app.use('*', honoLimit({ limiter: limitOf3(), key: rec.key, validate: false }));
  app.get('/items/:id', (c) => {
    handled.hit();
    return c.text('item');
  });
  // Matches too, but the handler above answers first: the key names that one.
  app.get('*', (c) => c.text('fallback'));
  const served = await serveFetch(app.fetch, '127.0.0.1');
  open.push(served.close);
  const statuses: number[] = [];
  for (const target of ['/items/1', '/items/2', '/items/3', '/items/4']) {
    for (const method of ['GET', 'HEAD'])
      statuses.push(await rawRequest(served.url, method, target));
  }
  expect(handled.count()).toBe(3);
  expect(statuses.filter((s) => s === 200)).toHaveLength(3);
  expect([...rec.seen]).toEqual(['route:GET /items/:id']);
});
