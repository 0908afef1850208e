// The concurrency middleware on every adapter, with real servers and real requests: the limit
// holds (a denial is a 429 or 503 with Retry-After), a finished response releases its lease, and
// so does a client that disconnects mid-request.
import { createServer, type Server } from 'node:http';
import { PassThrough } from 'node:stream';
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { concurrencyLimit as expressLimit } from '../src/express/index.js';
import { concurrencyLimit as fastifyLimit } from '../src/fastify/index.js';
import { concurrencyLimit as fetchLimit } from '../src/fetch/index.js';
import { concurrencyLimit as honoLimit } from '../src/hono/index.js';
import type { ConcurrencyLimitOptions } from '../src/index.js';
import { concurrencyLimit as nodeLimit } from '../src/node/index.js';
import { serveFetch } from './adapters/hono.js';
import { urlOf } from './support/harness.js';
import { steadyMemoryStore } from './support/stores.js';

/** Handlers of `/slow` wait here until the test opens the gate; `/fast` answers at once. */
class Gate {
  entered = 0;
  #open: (() => void) | undefined;
  #opened = new Promise<void>((resolve) => {
    this.#open = resolve;
  });
  async pass(): Promise<void> {
    this.entered++;
    await this.#opened;
  }
  open(): void {
    this.#open!();
  }
}

interface App {
  url: string;
  close(): Promise<void>;
}
/** The options without `key`: every app counts all its requests as one client's. */
type Base = Omit<ConcurrencyLimitOptions, 'key'>;
type Start = (base: Base, gate: Gate) => Promise<App>;
const key = () => 'client';

async function listen(server: Server): Promise<App> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: urlOf(server.address()),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

const utf8 = new TextEncoder();
/** `/stream`'s body: `first|` at once, `last` once the gate opens. */
function streamed(gate: Gate): ReadableStream<Uint8Array> {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      c.enqueue(utf8.encode('first|'));
    },
  });
  gate.pass().then(() => {
    controller.enqueue(utf8.encode('last'));
    controller.close();
  });
  return body;
}

const ADAPTERS: Record<string, Start> = {
  async node(base, gate) {
    const inFlight = nodeLimit({ ...base, key });
    return listen(
      createServer(async (req, res) => {
        if (!(await inFlight(req, res))) return;
        if (req.url === '/stream') {
          res.write('first|');
          await gate.pass();
          res.end('last');
          return;
        }
        if (req.url === '/slow') await gate.pass();
        res.end('ok');
      }),
    );
  },
  async express(base, gate) {
    const app = express();
    app.use(expressLimit({ ...base, key }));
    app.get('/slow', async (_req, res) => {
      await gate.pass();
      res.send('ok');
    });
    app.get('/stream', async (_req, res) => {
      res.write('first|');
      await gate.pass();
      res.end('last');
    });
    app.get('/fast', (_req, res) => res.send('ok'));
    return listen(createServer(app));
  },
  async fastify(base, gate) {
    const app = Fastify();
    app.addHook('onRequest', fastifyLimit({ ...base, key }));
    app.get('/slow', async () => {
      await gate.pass();
      return 'ok';
    });
    app.get('/stream', async (_req, reply) => {
      const body = new PassThrough();
      body.write('first|');
      gate.pass().then(() => body.end('last'));
      return reply.send(body);
    });
    app.get('/fast', async () => 'ok');
    await app.listen({ port: 0, host: '127.0.0.1' });
    return { url: urlOf(app.server.address()), close: () => app.close() };
  },
  async hono(base, gate) {
    const app = new Hono();
    app.use('*', honoLimit({ ...base, key }));
    app.get('/slow', async (c) => {
      await gate.pass();
      return c.text('ok');
    });
    app.get('/stream', (c) => c.body(streamed(gate)));
    app.get('/fast', (c) => c.text('ok'));
    return serveFetch(app.fetch, '127.0.0.1');
  },
  async fetch(base, gate) {
    const handler = fetchLimit({ ...base, key }).wrap(async (request) => {
      const path = new URL(request.url).pathname;
      if (path === '/stream') return new Response(streamed(gate));
      if (path === '/slow') await gate.pass();
      return new Response('ok');
    });
    return serveFetch(handler, '127.0.0.1');
  },
};

const until = async (what: string, check: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!check()) throw new Error(`timed out waiting: ${what}`);
};

const opened: App[] = [];
const gates: Gate[] = [];
afterEach(async () => {
  // A failed test leaves handlers waiting: let them finish, or the servers never close.
  for (const gate of gates.splice(0)) gate.open();
  await Promise.all(opened.splice(0).map((a) => a.close()));
});

describe.each(Object.keys(ADAPTERS))('%s: concurrencyLimit', (name) => {
  async function setUp(status?: 429 | 503) {
    const store = steadyMemoryStore();
    const limiter = createConcurrencyLimiter({ store, limit: 2, leaseMs: '1m' });
    const gate = new Gate();
    gates.push(gate);
    const app = await ADAPTERS[name]!(
      status === undefined ? { limiter } : { limiter, status },
      gate,
    );
    opened.push(app);
    const held = () => store.leasesHeld(limiter.key('client'));
    return { app, gate, held, limiter };
  }

  it('the limit holds; a finished response releases its lease', async () => {
    const { app, gate, held } = await setUp();
    const slow = [fetch(`${app.url}/slow`), fetch(`${app.url}/slow`)];
    await until('two handlers running', () => gate.entered === 2);
    expect(held()).toBe(2);
    const denied = await fetch(`${app.url}/fast`);
    expect(denied.status).toBe(429);
    expect(denied.headers.get('retry-after')).toBe('60');
    expect(denied.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await denied.json()).toMatchObject({ status: 429, retryAfter: 60 });
    gate.open();
    for (const res of await Promise.all(slow)) expect(await res.text()).toBe('ok');
    await until('both leases released', () => held() === 0);
    const after = await fetch(`${app.url}/fast`);
    expect([after.status, await after.text()]).toEqual([200, 'ok']);
    await until('the fast response released too', () => held() === 0);
  });

  it('a client that disconnects mid-request releases its lease', async () => {
    const { app, gate, held, limiter } = await setUp();
    const abort = new AbortController();
    const gone = fetch(`${app.url}/slow`, { signal: abort.signal }).catch((e: Error) => e.name);
    const stays = fetch(`${app.url}/slow`);
    await until('two handlers running', () => gate.entered === 2);
    expect((await limiter.acquire('client')).allowed).toBe(false);
    abort.abort();
    expect(await gone).toBe('AbortError');
    await until('the abandoned lease released', () => held() === 1);
    const lease = await limiter.acquire('client');
    expect(lease.allowed).toBe(true);
    await lease.release();
    gate.open();
    expect((await stays).status).toBe(200);
  });

  it('a streamed response holds its lease until its last byte', async () => {
    const { app, gate, held } = await setUp();
    const res = await fetch(`${app.url}/stream`);
    const reader = res.body!.getReader();
    const text = new TextDecoder();
    let got = '';
    while (!got.includes('first|')) got += text.decode((await reader.read()).value);
    await until('the handler waits', () => gate.entered === 1);
    expect(held()).toBe(1);
    gate.open();
    for (let r = await reader.read(); !r.done; r = await reader.read()) got += text.decode(r.value);
    expect(got).toBe('first|last');
    await until('released after the last byte', () => held() === 0);
  });

  it('status: 503 answers a denial with 503 and Retry-After', async () => {
    const { app, gate } = await setUp(503);
    const slow = [fetch(`${app.url}/slow`), fetch(`${app.url}/slow`)];
    await until('two handlers running', () => gate.entered === 2);
    const denied = await fetch(`${app.url}/fast`);
    expect([denied.status, denied.headers.get('retry-after')]).toEqual([503, '60']);
    gate.open();
    await Promise.all(slow);
  });
});
