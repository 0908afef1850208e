// The apps the concurrency tests run, one per adapter, each a real server on a loopback port:
// `/slow` waits for the test's gate, `/stream` sends a first chunk and the rest once the gate
// opens, `/fast` answers at once. Every request counts as one client's (`key: () => 'client'`).
import { createServer, type Server } from 'node:http';
import { PassThrough } from 'node:stream';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { concurrencyLimit as expressLimit } from '../src/express/index.js';
import { concurrencyLimit as fastifyLimit } from '../src/fastify/index.js';
import { concurrencyLimit as fetchLimit } from '../src/fetch/index.js';
import { concurrencyLimit as honoLimit } from '../src/hono/index.js';
import type { ConcurrencyLimitOptions } from '../src/index.js';
import { concurrencyLimit as nodeLimit } from '../src/node/index.js';
import { serveFetch } from './adapters/hono.js';
import { urlOf } from './support/harness.js';

/** Handlers of `/slow` wait here until the test opens the gate; `/fast` answers at once. */
export class Gate {
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

export interface App {
  url: string;
  close(): Promise<void>;
}
/** The options without `key`: every app counts all its requests as one client's. */
export type Base = Omit<ConcurrencyLimitOptions, 'key'>;
export type Start = (base: Base, gate: Gate) => Promise<App>;
const key = () => 'client';

export async function listen(server: Server): Promise<App> {
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

export const ADAPTERS: Record<string, Start> = {
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

/** Waits (up to 2 s) until `check` holds, or fails naming `what`. */
export const until = async (
  what: string,
  check: () => boolean | Promise<boolean>,
): Promise<void> => {
  for (let i = 0; i < 400 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5));
  if (!(await check())) throw new Error(`timed out waiting: ${what}`);
};
