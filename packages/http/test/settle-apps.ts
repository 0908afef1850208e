// The apps the settle tests run, one per adapter, each a real server on a loopback port with
// `rateLimit({ …, settle })` app-wide. Every handler keeps its request's usage meter
// (`usageOf`) in `meters`, so a test waits for `settled` instead of guessing a delay.
//   /stream  an SSE response of three events, reporting 7 tokens before each (`add`)
//   /abort   two events of 5 tokens each, then waits until the client goes away
//   /plain   a plain response, the real cost reported at once (`report({ tokens: 3 })`)
//   /silent  a plain response, nothing reported (the estimate stands)
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { PassThrough } from 'node:stream';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { rateLimit as expressLimit } from '../src/express/index.js';
import { rateLimit as fastifyLimit } from '../src/fastify/index.js';
import { rateLimit as fetchLimit } from '../src/fetch/index.js';
import { rateLimit as honoLimit } from '../src/hono/index.js';
import { type RateLimitOptions, type RequestUsage, usageOf } from '../src/index.js';
import { rateLimit as nodeLimit } from '../src/node/index.js';
import { serveFetch } from './adapters/hono.js';
import { type App, listen } from './concurrency-apps.js';

export interface SettleApp extends App {
  /** The usage meter of each request a handler ran for, in arrival order. */
  readonly meters: (RequestUsage | undefined)[];
}
export type StartSettle = (options: RateLimitOptions) => Promise<SettleApp>;

export const STREAM_EVENTS = ['alpha', 'beta', 'gamma'];
export const STREAM_TOKENS = 7;
export const ABORT_TOKENS = 5;
const event = (data: string): string => `data: ${data}\n\n`;

/** node:http (node, Express): the four routes on `req` / `res`; false for another path. */
async function serveIncoming(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  meters: SettleApp['meters'],
): Promise<boolean> {
  const usage = usageOf(req);
  meters.push(usage);
  if (path === '/stream' || path === '/abort') {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    if (path === '/stream') {
      for (const data of STREAM_EVENTS) {
        usage?.add({ tokens: STREAM_TOKENS });
        res.write(event(data));
      }
      res.end();
      return true;
    }
    const closed = new Promise((resolve) => res.once('close', resolve));
    for (const data of ['one', 'two']) {
      usage?.add({ tokens: ABORT_TOKENS });
      res.write(event(data));
    }
    await closed;
    return true;
  }
  if (path === '/plain') usage?.report({ tokens: 3 });
  if (path !== '/plain' && path !== '/silent') return false;
  res.end('ok');
  return true;
}

const utf8 = new TextEncoder();

/** Fetch and Hono: the SSE body, reporting before each event as the client pulls it. */
function sseBody(path: '/stream' | '/abort', usage: RequestUsage | undefined): ReadableStream {
  const events = path === '/stream' ? STREAM_EVENTS : ['one', 'two'];
  const tokens = path === '/stream' ? STREAM_TOKENS : ABORT_TOKENS;
  let sent = 0;
  let cancelled: () => void = () => {};
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent < events.length) {
        usage?.add({ tokens });
        controller.enqueue(utf8.encode(event(events[sent++] as string)));
        return;
      }
      if (path === '/stream') {
        controller.close();
        return;
      }
      // /abort: nothing more until the client goes away (the body is cancelled).
      return new Promise<void>((resolve) => {
        cancelled = resolve;
      });
    },
    cancel() {
      cancelled();
    },
  });
}

/** Fetch and Hono: the response for a path, or undefined for another one. */
function webResponse(path: string, usage: RequestUsage | undefined): Response | undefined {
  if (path === '/stream' || path === '/abort') {
    return new Response(sseBody(path, usage), {
      headers: { 'Content-Type': 'text/event-stream' },
    });
  }
  if (path === '/plain') usage?.report({ tokens: 3 });
  if (path !== '/plain' && path !== '/silent') return undefined;
  return new Response('ok');
}

export const SETTLE_ADAPTERS: Record<string, StartSettle> = {
  async node(options) {
    const limit = nodeLimit(options);
    const meters: SettleApp['meters'] = [];
    const app = await listen(
      createServer(async (req, res) => {
        if (!(await limit(req, res))) return;
        if (!(await serveIncoming(req.url ?? '/', req, res, meters))) res.writeHead(404).end();
      }),
    );
    return { ...app, meters };
  },
  async express(options) {
    const meters: SettleApp['meters'] = [];
    const app = express();
    app.use(expressLimit(options));
    app.get('/:route', async (req, res, next) => {
      if (!(await serveIncoming(req.path, req, res, meters))) next();
    });
    return { ...(await listen(createServer(app))), meters };
  },
  async fastify(options) {
    const meters: SettleApp['meters'] = [];
    const app = Fastify();
    await app.register(fastifyLimit, options);
    app.get('/:route', async (request, reply) => {
      const usage = usageOf(request);
      meters.push(usage);
      const path = request.url;
      if (path === '/stream' || path === '/abort') {
        const body = new PassThrough();
        const events = path === '/stream' ? STREAM_EVENTS : ['one', 'two'];
        const tokens = path === '/stream' ? STREAM_TOKENS : ABORT_TOKENS;
        for (const data of events) {
          usage?.add({ tokens });
          body.write(event(data));
        }
        if (path === '/stream') body.end();
        else reply.raw.once('close', () => body.end());
        return reply.header('Content-Type', 'text/event-stream').send(body);
      }
      if (path === '/plain') usage?.report({ tokens: 3 });
      return 'ok';
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const address = app.server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    return { url: `http://127.0.0.1:${port}`, close: () => app.close(), meters };
  },
  async hono(options) {
    const meters: SettleApp['meters'] = [];
    const app = new Hono();
    app.use('*', honoLimit(options));
    app.get('/:route', (c) => {
      const usage = usageOf(c);
      meters.push(usage);
      return webResponse(c.req.path, usage) ?? c.notFound();
    });
    return { ...(await serveFetch(app.fetch, '127.0.0.1')), meters };
  },
  async fetch(options) {
    const meters: SettleApp['meters'] = [];
    const handler = fetchLimit(options).wrap(async (request) => {
      const usage = usageOf(request);
      meters.push(usage);
      return (
        webResponse(new URL(request.url).pathname, usage) ?? new Response(null, { status: 404 })
      );
    });
    return { ...(await serveFetch(handler, '127.0.0.1')), meters };
  },
};
