import fastifyCors from '@fastify/cors';
import { createLimiter, fixedWindow } from '@floodgate/core';
import cors from 'cors';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { cors as honoCors } from 'hono/cors';
import { afterEach, describe, expect, test } from 'vitest';
import { rateLimit as expressRateLimit } from '../src/express/index.js';
import { rateLimit as fastifyRateLimit } from '../src/fastify/index.js';
import { rateLimit as honoRateLimit } from '../src/hono/index.js';
import { serveFetch } from './adapters/hono.js';
import { send } from './support/context.js';
import { urlOf } from './support/harness.js';
import { steadyMemoryStore } from './support/stores.js';

// The frameworks' own CORS middleware, registered before and after the limiter: the expose list
// carries both the CORS config's names and ours. Registered after the limiter, CORS never runs
// for a denial (the limiter answered first): the docs say to register CORS first.
const ORIGIN = { origin: 'https://app.example.test' };
const limiter = () =>
  createLimiter({
    store: steadyMemoryStore(),
    policy: fixedWindow({ name: 'p', limit: 1, window: '1m' }),
  });
const names = (value: string | null) =>
  (value ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .sort();
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function check(url: string, corsFirst: boolean): Promise<void> {
  const ok = await send(url, ORIGIN);
  expect(ok.status).toBe(200);
  expect(ok.headers.get('access-control-allow-origin')).not.toBeNull();
  expect(names(ok.headers.get('access-control-expose-headers'))).toEqual([
    'ratelimit',
    'ratelimit-policy',
    'x-request-id',
  ]);
  const denied = await send(url, ORIGIN);
  expect(denied.status).toBe(429);
  const ours = ['ratelimit', 'ratelimit-policy', 'retry-after'];
  expect(names(denied.headers.get('access-control-expose-headers'))).toEqual(
    corsFirst ? [...ours, 'x-request-id'] : ours,
  );
  expect(denied.headers.get('access-control-allow-origin') !== null).toBe(corsFirst);
}

const exposed = ['X-Request-Id'];

describe('with the framework CORS middleware', () => {
  for (const order of ['cors first', 'limiter first'] as const) {
    test(`express + cors (${order})`, async () => {
      const app = express();
      const mw = [cors({ exposedHeaders: exposed }), expressRateLimit({ limiter: limiter() })];
      app.use(...(order === 'cors first' ? mw : mw.reverse()));
      app.get('/', (_req, res) => {
        res.send('ok');
      });
      const server = app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      closers.push(
        () =>
          new Promise((resolve) => {
            server.closeAllConnections();
            server.close(resolve);
          }),
      );
      await check(urlOf(server.address()), order === 'cors first');
    });

    test(`fastify + @fastify/cors (${order})`, async () => {
      const app = Fastify();
      const registerCors = () =>
        app.register(fastifyCors, { origin: true, exposedHeaders: exposed });
      const registerLimit = () => app.register(fastifyRateLimit, { limiter: limiter() });
      if (order === 'cors first') {
        await registerCors();
        await registerLimit();
      } else {
        await registerLimit();
        await registerCors();
      }
      app.get('/', async () => 'ok');
      await app.listen({ port: 0, host: '127.0.0.1' });
      closers.push(() => app.close());
      await check(urlOf(app.server.address()), order === 'cors first');
    });

    test(`hono + hono/cors (${order})`, async () => {
      const app = new Hono();
      const c = honoCors({ origin: '*', exposeHeaders: exposed });
      const l = honoRateLimit({ limiter: limiter() });
      app.use('*', order === 'cors first' ? c : l);
      app.use('*', order === 'cors first' ? l : c);
      app.get('/', (ctx) => ctx.text('ok'));
      const served = await serveFetch(app.fetch, '127.0.0.1');
      closers.push(served.close);
      await check(served.url, order === 'cors first');
    });
  }
});
