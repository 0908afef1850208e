// What the Hono and fetch adapters put on the wire, header by header, for an admitted, a denied
// and a shadow decision: the same as before the adapters applied headers straight from the
// engine's outcome. Real servers and real requests.
import { createLimiter, fixedWindow } from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import { Hono } from 'hono';
import { afterEach, describe, expect, test } from 'vitest';
import { rateLimit as fetchRateLimit } from '../src/fetch/index.js';
import { rateLimit as honoRateLimit } from '../src/hono/index.js';
import type { RateLimitOptions } from '../src/index.js';
import { closeServed, serveLoopback } from './adapters/hono.js';
import { send, T0 } from './support/context.js';

type Kind = 'hono' | 'fetch';
const KINDS: readonly Kind[] = ['hono', 'fetch'];

afterEach(closeServed);
const serve = serveLoopback;

/**
 * `GET /` answering `ok` with `Access-Control-Expose-Headers: X-Request-Id` (as CORS would);
 * `GET /plain` a `new Response` of the handler's own; fetch's `GET /redirect` a redirect, whose
 * headers are immutable.
 */
async function start(kind: Kind, options: RateLimitOptions): Promise<string> {
  if (kind === 'hono') {
    const app = new Hono();
    app.use('*', honoRateLimit(options));
    app.get('/', (c) => {
      c.header('Access-Control-Expose-Headers', 'X-Request-Id');
      return c.text('ok');
    });
    app.get('/plain', () => new Response('plain'));
    return serve(app.fetch);
  }
  const limit = fetchRateLimit(options);
  return serve(
    limit.wrap(async (request) => {
      const path = new URL(request.url).pathname;
      if (path === '/plain') return new Response('plain');
      if (path === '/redirect') return Response.redirect('http://example.test/', 302);
      return new Response('ok', { headers: { 'Access-Control-Expose-Headers': 'X-Request-Id' } });
    }),
  );
}

/** Every header of a reply but those that change from run to run or with the connection. */
function wire(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of headers) {
    if (name !== 'date' && name !== 'keep-alive' && name !== 'connection') out[name] = value;
  }
  return out;
}

const now = (): number => T0;
const limiterOf = (limit: number, shadow = false) =>
  createLimiter({
    store: new MemoryStore({ now }),
    policy: fixedWindow({ name: 'api', limit, window: '10s', shadow }),
  });

interface Seen {
  status: number;
  text: string;
  headers: Record<string, string>;
}

/** Each request in turn (their order matters: they share one key), as they came back. */
async function replies(url: string, paths: readonly string[]): Promise<Seen[]> {
  const seen: Seen[] = [];
  for (const path of paths) {
    const r = await send(`${url}${path}`);
    seen.push({ status: r.status, text: r.text, headers: wire(r.headers) });
  }
  return seen;
}

describe.each(KINDS)('%s: the headers on the wire', (kind) => {
  test('admitted (the app exposes a header of its own, and a Response of its own), then denied', async () => {
    const url = await start(kind, { limiter: limiterOf(2), key: () => 'k' });
    expect(await replies(url, ['/', '/plain', '/'])).toEqual(ADMITTED_THEN_DENIED);
  });

  test('shadow, without and with shadowHeaders', async () => {
    const quiet = await start(kind, { limiter: limiterOf(1, true), key: () => 'k' });
    expect(await replies(quiet, ['/', '/'])).toEqual(SHADOW_QUIET);
    const shadowHeaders = true;
    const loud = await start(kind, { limiter: limiterOf(1, true), key: () => 'k', shadowHeaders });
    expect(await replies(loud, ['/', '/'])).toEqual(SHADOW_HEADERS);
  });

  test('draft-7 and legacy headers, no expose list', async () => {
    const url = await start(kind, {
      limiter: limiterOf(1),
      key: () => 'k',
      headers: 'draft-7',
      legacyHeaders: true,
      exposeHeaders: false,
    });
    expect(await replies(url, ['/', '/'])).toEqual(LEGACY);
  });

  test('a skipped request: no headers of ours', async () => {
    const url = await start(kind, { limiter: limiterOf(1), key: () => 'k', skip: () => true });
    expect(await replies(url, ['/', '/'])).toEqual(SKIPPED);
  });
});

describe('fetch: responses and headersFor', () => {
  test('a response with immutable headers is copied with ours on it', async () => {
    const url = await start('fetch', { limiter: limiterOf(2), key: () => 'k' });
    const r = await fetch(`${url}/redirect`, { redirect: 'manual' });
    expect(r.status).toBe(302);
    expect(wire(r.headers)).toEqual(REDIRECT);
  });

  test('headersFor: the same Headers on every call, applied by wrap as the handler left them', async () => {
    const limit = fetchRateLimit({ limiter: limiterOf(5), key: () => 'k' });
    const made: (Headers | undefined)[] = [];
    const url = await serve(
      limit.wrap(async (request) => {
        const headers = limit.headersFor(request);
        made.push(headers, limit.headersFor(request), limit.headersFor(new Request(request.url)));
        headers?.set('X-Added', 'by the handler');
        return new Response('ok');
      }),
    );
    const r = await send(url);
    expect(made[0]).toBeInstanceOf(Headers);
    expect(made[1]).toBe(made[0]);
    expect(made[2]).toBeUndefined();
    expect(wire(r.headers)).toEqual({ ...HEADERS_FOR, 'x-added': 'by the handler' });
  });
});

/** The RFC 9457 body of a denial by the fixed window `api` of `limit`, 10 s to its end. */
function problem(limit: number): string {
  return JSON.stringify({
    type: 'about:blank',
    title: 'Too Many Requests',
    status: 429,
    detail: 'Rate limit exceeded for "api"; retry in 10 s.',
    retryAfter: 10,
    violated: ['api'],
    policies: [{ name: 'api', limit, remaining: 0, resetSeconds: 10, windowSeconds: 10 }],
  });
}

const ADMITTED_THEN_DENIED: Seen[] = [
  {
    status: 200,
    text: 'ok',
    headers: {
      'access-control-expose-headers': 'X-Request-Id, RateLimit, RateLimit-Policy',
      'content-length': '2',
      'content-type': 'text/plain; charset=UTF-8',
      ratelimit: '"api";r=1;t=10',
      'ratelimit-policy': '"api";q=2;w=10',
    },
  },
  {
    status: 200,
    text: 'plain',
    headers: {
      'access-control-expose-headers': 'RateLimit, RateLimit-Policy',
      'content-length': '5',
      'content-type': 'text/plain; charset=UTF-8',
      ratelimit: '"api";r=0;t=10',
      'ratelimit-policy': '"api";q=2;w=10',
    },
  },
  {
    status: 429,
    text: problem(2),
    headers: {
      'access-control-expose-headers': 'RateLimit, RateLimit-Policy, Retry-After',
      'content-length': '246',
      'content-type': 'application/problem+json',
      ratelimit: '"api";r=0;t=10',
      'ratelimit-policy': '"api";q=2;w=10',
      'retry-after': '10',
    },
  },
];
const SHADOW_QUIET: Seen[] = [
  {
    status: 200,
    text: 'ok',
    headers: {
      'access-control-expose-headers': 'X-Request-Id',
      'content-length': '2',
      'content-type': 'text/plain; charset=UTF-8',
    },
  },
  {
    status: 200,
    text: 'ok',
    headers: {
      'access-control-expose-headers': 'X-Request-Id',
      'content-length': '2',
      'content-type': 'text/plain; charset=UTF-8',
    },
  },
];
const SHADOW_HEADERS: Seen[] = [
  {
    status: 200,
    text: 'ok',
    headers: {
      'access-control-expose-headers': 'X-Request-Id, RateLimit, RateLimit-Policy',
      'content-length': '2',
      'content-type': 'text/plain; charset=UTF-8',
      ratelimit: '"api";r=0;t=10',
      'ratelimit-policy': '"api";q=1;w=10',
    },
  },
  {
    status: 200,
    text: 'ok',
    headers: {
      'access-control-expose-headers': 'X-Request-Id, RateLimit, RateLimit-Policy',
      'content-length': '2',
      'content-type': 'text/plain; charset=UTF-8',
      ratelimit: '"api";r=0;t=10',
      'ratelimit-policy': '"api";q=1;w=10',
    },
  },
];
const LEGACY: Seen[] = [
  {
    status: 200,
    text: 'ok',
    headers: {
      'access-control-expose-headers': 'X-Request-Id',
      'content-length': '2',
      'content-type': 'text/plain; charset=UTF-8',
      ratelimit: 'limit=1, remaining=0, reset=10',
      'ratelimit-policy': '1;w=10',
      'x-ratelimit-limit': '1',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '10',
    },
  },
  {
    status: 429,
    text: problem(1),
    headers: {
      'content-length': '246',
      'content-type': 'application/problem+json',
      ratelimit: 'limit=1, remaining=0, reset=10',
      'ratelimit-policy': '1;w=10',
      'retry-after': '10',
      'x-ratelimit-limit': '1',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': '10',
    },
  },
];
const SKIPPED: Seen[] = SHADOW_QUIET;
// The copy streams the redirect's (empty) body: chunked, as before.
const REDIRECT: Record<string, string> = {
  'access-control-expose-headers': 'RateLimit, RateLimit-Policy',
  location: 'http://example.test/',
  ratelimit: '"api";r=1;t=10',
  'ratelimit-policy': '"api";q=2;w=10',
  'transfer-encoding': 'chunked',
};
const HEADERS_FOR: Record<string, string> = {
  'access-control-expose-headers': 'RateLimit, RateLimit-Policy',
  'content-length': '2',
  'content-type': 'text/plain; charset=UTF-8',
  ratelimit: '"api";r=4;t=10',
  'ratelimit-policy': '"api";q=5;w=10',
};
