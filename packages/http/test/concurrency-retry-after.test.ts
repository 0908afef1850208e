// What a concurrencyLimit denial tells a client (issue 30, item 9), on every adapter with a real
// server: `Retry-After` follows how long this limiter's slots are really held (the longest of
// its recent hold times, at least 1 s, at most the store's bound), not the 1-minute leaseMs,
// and a browser app may read it (`Access-Control-Expose-Headers`).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import fastifyCors from '@fastify/cors';
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import cors from 'cors';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { cors as honoCors } from 'hono/cors';
import { afterEach, describe, expect, it } from 'vitest';
import { concurrencyLimit as expressLimit } from '../src/express/index.js';
import { concurrencyLimit as fastifyLimit } from '../src/fastify/index.js';
import { concurrencyLimit as honoLimit } from '../src/hono/index.js';
import { serveFetch } from './adapters/hono.js';
import { ADAPTERS, type App, Gate, listen, until } from './concurrency-apps.js';
import { steadyMemoryStore } from './support/stores.js';

const opened: App[] = [];
const gates: Gate[] = [];
afterEach(async () => {
  for (const gate of gates.splice(0)) gate.open();
  await Promise.all(opened.splice(0).map((a) => a.close()));
});

const exposed = (res: Response): string[] =>
  (res.headers.get('access-control-expose-headers') ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter((s) => s !== '');

describe.each(Object.keys(ADAPTERS))('%s: concurrencyLimit Retry-After', (name) => {
  it('says how long slots are really held, not leaseMs, and exposes Retry-After', async () => {
    const store = steadyMemoryStore();
    const limiter = createConcurrencyLimiter({ store, limit: 1, leaseMs: '1m' });
    const held = () => store.leasesHeld(limiter.key('client'));
    const gate = new Gate();
    gates.push(gate);
    const app = await ADAPTERS[name]!({ limiter }, gate);
    opened.push(app);
    // A request that held its slot a few ms: the limiter has seen a hold time.
    expect((await fetch(`${app.url}/fast`)).status).toBe(200);
    await until('the fast request released', () => held() === 0);
    const slow = fetch(`${app.url}/slow`);
    await until('the slow handler running', () => gate.entered === 1);
    const denied = await fetch(`${app.url}/fast`);
    expect(denied.status).toBe(429);
    // The store's bound is ~60 s (the lease expires a minute after its grant); slots were held
    // for milliseconds, so the floor of 1 s is what a client is told.
    expect(denied.headers.get('retry-after')).toBe('1');
    expect(await denied.json()).toMatchObject({ status: 429, retryAfter: 1 });
    expect(exposed(denied)).toContain('retry-after');
    gate.open();
    expect((await slow).status).toBe(200);
  });
});

describe('express: concurrencyLimit behind the cors middleware', () => {
  it("adds Retry-After to the expose list CORS set, keeping CORS's names", async () => {
    const limiter = createConcurrencyLimiter({
      store: steadyMemoryStore(),
      limit: 1,
      leaseMs: '1m',
    });
    const gate = new Gate();
    gates.push(gate);
    const app = express();
    app.use(cors({ exposedHeaders: ['X-Request-Id'] }));
    app.use(expressLimit({ limiter, key: () => 'client' }));
    app.get('/slow', async (_req, res) => {
      await gate.pass();
      res.send('ok');
    });
    app.get('/fast', (_req, res) => {
      res.send('ok');
    });
    const served = await listen(createServer(app));
    opened.push(served);
    const origin = { headers: { origin: 'https://app.example.test' } };
    const slow = fetch(`${served.url}/slow`, origin);
    await until('the slow handler running', () => gate.entered === 1);
    const denied = await fetch(`${served.url}/fast`, origin);
    expect(denied.status).toBe(429);
    expect(exposed(denied).sort()).toEqual(['retry-after', 'x-request-id']);
    gate.open();
    await slow;
  });
});

describe.each(['hono', 'fastify'] as const)(
  '%s: concurrencyLimit behind CORS middleware',
  (name) => {
    it("adds Retry-After to the expose list CORS set, keeping CORS's names", async () => {
      const limiter = createConcurrencyLimiter({
        store: steadyMemoryStore(),
        limit: 1,
        leaseMs: '1m',
      });
      const gate = new Gate();
      gates.push(gate);
      let app: App;
      if (name === 'hono') {
        const hono = new Hono();
        hono.use('*', honoCors({ origin: '*', exposeHeaders: ['X-Request-Id'] }));
        hono.use('*', honoLimit({ limiter, key: () => 'client' }));
        hono.get('/slow', async (c) => {
          await gate.pass();
          return c.text('ok');
        });
        hono.get('/fast', (c) => c.text('ok'));
        app = await serveFetch(hono.fetch, '127.0.0.1');
      } else {
        const fastify = Fastify();
        await fastify.register(fastifyCors, { origin: '*', exposedHeaders: ['X-Request-Id'] });
        fastify.addHook('onRequest', fastifyLimit({ limiter, key: () => 'client' }));
        fastify.get('/slow', async () => {
          await gate.pass();
          return 'ok';
        });
        fastify.get('/fast', async () => 'ok');
        await fastify.listen({ port: 0, host: '127.0.0.1' });
        const address = fastify.server.address() as AddressInfo;
        app = { url: `http://127.0.0.1:${address.port}`, close: () => fastify.close() };
      }
      opened.push(app);
      const origin = { headers: { origin: 'https://app.example.test' } };
      const slow = fetch(`${app.url}/slow`, origin);
      await until('the slow handler running', () => gate.entered === 1);
      const denied = await fetch(`${app.url}/fast`, origin);
      expect(denied.status).toBe(429);
      expect(exposed(denied).sort()).toEqual(['retry-after', 'x-request-id']);
      gate.open();
      await slow;
    });
  },
);
