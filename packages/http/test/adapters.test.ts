import { createServer } from 'node:http';
import { createLimiter, fixedWindow } from '@floodgate/core';
import express from 'express';
import { Hono } from 'hono';
import { describe, expect, test } from 'vitest';
import { rateLimit as expressRateLimit } from '../src/express/index.js';
import { rateLimit as fetchRateLimit } from '../src/fetch/index.js';
import { rateLimit as honoRateLimit } from '../src/hono/index.js';
import { headerKey, routeKey } from '../src/index.js';
import { rateLimit as nodeRateLimit } from '../src/node/index.js';
import { send } from './support/context.js';
import { urlOf } from './support/harness.js';
import { steadyMemoryStore } from './support/stores.js';

const limiter = (limit: number) =>
  createLimiter({
    store: steadyMemoryStore(),
    policy: fixedWindow({ name: 'p', limit, window: '1m' }),
  });

describe('fetch adapter, beyond the suite', () => {
  test('check form: undefined to go on, headersFor gives the headers to add', async () => {
    const limit = fetchRateLimit({ limiter: limiter(1), key: headerKey('x-user') });
    const request = new Request('https://api.example.test/items', { headers: { 'x-user': 'u1' } });
    expect(await limit(request)).toBeUndefined();
    expect(limit.headersFor(request)?.get('ratelimit')).toMatch(/^"p";r=0;t=\d+$/);
    const denied = await limit(
      new Request('https://api.example.test/items', { headers: { 'x-user': 'u1' } }),
    );
    expect(denied?.status).toBe(429);
    expect(denied?.headers.get('content-type')).toBe('application/problem+json');
    expect(await denied?.json()).toMatchObject({ status: 429, violated: ['p'] });
  });

  test('wrap adds headers even to a response whose headers are immutable', async () => {
    const limit = fetchRateLimit({ limiter: limiter(5), key: headerKey('x-user') });
    const handler = limit.wrap(async () =>
      Response.redirect('https://example.test/elsewhere', 302),
    );
    const res = await handler(
      new Request('https://api.example.test/', { headers: { 'x-user': 'u' } }),
    );
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://example.test/elsewhere');
    expect(res.headers.get('ratelimit')).toMatch(/^"p";r=4;t=\d+$/);
  });

  test('ipKey without getAddress: 503 (fail-closed), reported as a key error', async () => {
    const errors: unknown[] = [];
    const limit = fetchRateLimit({ limiter: limiter(5), onError: (e) => errors.push(e) });
    const res = await limit(new Request('https://api.example.test/'));
    expect(res?.status).toBe(503);
    expect(errors[0]).toMatchObject({ code: 'INVALID_KEY' });
  });

  test('getAddress feeds ipKey', async () => {
    const limit = fetchRateLimit({
      limiter: limiter(1),
      getAddress: (r) => r.headers.get('cf-connecting-ip') ?? undefined,
    });
    const from = (ip: string) =>
      new Request('https://x.test/', { headers: { 'cf-connecting-ip': ip } });
    expect(await limit(from('203.0.113.1'))).toBeUndefined();
    expect((await limit(from('203.0.113.1')))?.status).toBe(429);
    expect(await limit(from('203.0.113.2'))).toBeUndefined();
  });

  test('getAddress must be a function', () => {
    expect(() => fetchRateLimit({ limiter: limiter(1), getAddress: 'x' as never })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });
});

describe('hono adapter, beyond the suite', () => {
  test('getAddress replaces the node-server socket (other runtimes)', async () => {
    const app = new Hono();
    app.use(
      '*',
      honoRateLimit({ limiter: limiter(1), getAddress: (c) => c.req.header('x-test-ip') }),
    );
    app.get('/', (c) => c.text('ok'));
    const at = (ip: string) => app.request('/', { headers: { 'x-test-ip': ip } });
    expect((await at('203.0.113.1')).status).toBe(200);
    expect((await at('203.0.113.1')).status).toBe(429);
    expect((await at('203.0.113.2')).status).toBe(200);
  });
});

describe('node adapter, beyond the suite', () => {
  test('connect-style: next() is called only for admitted requests', async () => {
    const limit = nodeRateLimit({ limiter: limiter(1) });
    let nexts = 0;
    const server = createServer((req, res) => {
      void limit(req, res, () => {
        nexts++;
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = urlOf(server.address());
      expect([(await send(url)).status, (await send(url)).status]).toEqual([200, 429]);
      expect(nexts).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('express adapter, beyond the suite', () => {
  test('mounted on a route, routeKey sees the route pattern', async () => {
    const app = express();
    app.get(
      '/users/:id',
      expressRateLimit({ limiter: limiter(1), key: routeKey() }),
      (_req, res) => {
        res.send('ok');
      },
    );
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const url = urlOf(server.address());
      expect((await send(`${url}/users/1`)).status).toBe(200);
      expect((await send(`${url}/users/2`)).status).toBe(429);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
