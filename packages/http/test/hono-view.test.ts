// The request view the Hono and fetch adapters hand to keys (a class with a memoized address
// getter): the fields a key sees, `getAddress` asked at most once per request and only when a key
// reads the address, and ipKey() with and without trusting the proxy. Real servers, real requests.

import { createLimiter, fixedWindow } from '@floodgate/core';
import type { Http2Bindings, HttpBindings } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import { afterEach, describe, expect, test } from 'vitest';
import { rateLimit as fetchRateLimit } from '../src/fetch/index.js';
import { rateLimit as honoRateLimit } from '../src/hono/index.js';
import { ipKey, type RateLimitOptions, type RateLimitRequest } from '../src/index.js';
import { serveFetch } from './adapters/hono.js';
import { send } from './support/context.js';
import { steadyMemoryStore } from './support/stores.js';

/** What @hono/node-server passes a fetch handler after the request (its socket). */
type Bindings = HttpBindings | Http2Bindings;

type Kind = 'hono' | 'fetch';
const KINDS: readonly Kind[] = ['hono', 'fetch'];

/** `getAddress` as both adapters take it: counted, from the node-server socket. */
function countedAddress(): {
  calls: () => number;
  hono: (c: Context) => string | undefined;
  fetch: (request: Request, env: Bindings) => string | undefined;
} {
  let calls = 0;
  return {
    calls: () => calls,
    hono: (c) => {
      calls++;
      return (c.env as Bindings).incoming.socket.remoteAddress;
    },
    fetch: (_request, env) => {
      calls++;
      return env.incoming.socket.remoteAddress;
    },
  };
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => s.close()));
});

/** One app of `kind` serving `GET /users/:id` and `GET /` with `options` (and `getAddress`). */
async function start(
  kind: Kind,
  options: RateLimitOptions,
  address: ReturnType<typeof countedAddress>,
): Promise<string> {
  const limiter = createLimiter({
    store: steadyMemoryStore(),
    policy: fixedWindow({ name: 'api', limit: 100, window: '1m' }),
  });
  const all = { limiter, ...options };
  if (kind === 'hono') {
    const app = new Hono();
    app.use('*', honoRateLimit({ ...all, getAddress: address.hono }));
    app.get('/users/:id', (c) => c.text('user'));
    app.get('/', (c) => c.text('root'));
    const served = await serveFetch(app.fetch, '127.0.0.1');
    open.push(served);
    return served.url;
  }
  const limit = fetchRateLimit<[Bindings]>({ ...all, getAddress: address.fetch });
  const served = await serveFetch(
    limit.wrap(async () => new Response('ok')),
    '127.0.0.1',
  );
  open.push(served);
  return served.url;
}

describe.each(KINDS)('%s: the request view', (kind) => {
  test('a key sees method, path, route, header, raw and the address', async () => {
    const address = countedAddress();
    const seen: Record<string, unknown>[] = [];
    const key = (view: RateLimitRequest) => {
      const { header } = view;
      seen.push({
        own: Object.keys(view).slice(0, 5),
        method: view.method,
        path: view.path,
        route: view.route,
        header: view.header('x-api-key'),
        detached: header('X-API-KEY'),
        missing: view.header('x-absent'),
        hasAddress: 'address' in view,
        address: view.address,
        raw:
          kind === 'hono'
            ? (view.raw as Context).req.path
            : new URL((view.raw as Request).url).pathname,
      });
      return 'k';
    };
    const url = await start(kind, { key }, address);
    expect((await send(`${url}/users/7?q=1`, { 'x-api-key': 'abc' })).status).toBe(200);
    expect(seen).toEqual([
      {
        own: ['method', 'path', 'route', 'header', 'raw'],
        method: 'GET',
        path: '/users/7',
        route: kind === 'hono' ? '/users/:id' : undefined,
        header: 'abc',
        detached: 'abc',
        missing: undefined,
        hasAddress: true,
        address: '127.0.0.1',
        raw: '/users/7',
      },
    ]);
    expect(address.calls()).toBe(1);
  });

  test('getAddress runs once per request however often the address is read', async () => {
    const address = countedAddress();
    const reads: (string | undefined)[] = [];
    const key = (view: RateLimitRequest) => {
      for (let i = 0; i < 3; i++) reads.push(view.address);
      return `ip:${view.address}`;
    };
    const skip = (view: RateLimitRequest) => view.address === '192.0.2.1';
    const url = await start(kind, { key, skip }, address);
    for (let i = 1; i <= 3; i++) {
      expect((await send(url)).status).toBe(200);
      expect(address.calls()).toBe(i);
    }
    expect(reads).toEqual(Array(9).fill('127.0.0.1'));
  });

  test('getAddress is not called when no key reads the address', async () => {
    const address = countedAddress();
    const url = await start(kind, { key: (view) => view.header('x-api-key') }, address);
    for (let i = 0; i < 3; i++) {
      expect((await send(url, { 'x-api-key': `k${i}` })).status).toBe(200);
    }
    expect(address.calls()).toBe(0);
  });

  test('a getAddress that throws is a limiter error, and is asked again on the next read', async () => {
    const address = countedAddress();
    let failures = 1;
    const failing = {
      calls: address.calls,
      hono: (c: Context) => {
        if (failures-- > 0) throw new Error('no socket yet');
        return address.hono(c);
      },
      fetch: (request: Request, env: Bindings) => {
        if (failures-- > 0) throw new Error('no socket yet');
        return address.fetch(request, env);
      },
    };
    const errors: unknown[] = [];
    const key = (view: RateLimitRequest) => {
      try {
        return `ip:${view.address}`;
      } catch {
        return `ip:${view.address}`;
      }
    };
    const url = await start(kind, { key, onError: (e) => errors.push(e) }, failing);
    expect((await send(url)).status).toBe(200);
    // The first read threw, the second asked again and got the socket's address.
    expect(address.calls()).toBe(1);
    expect(errors).toEqual([]);
    failures = 1;
    const options = {
      key: (view: RateLimitRequest) => view.address,
      onError: (e: unknown) => errors.push(e),
    };
    const r = await send(await start(kind, options, failing));
    expect(r.status).toBe(503);
    expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(errors.map((e) => (e as Error).message)).toEqual(['no socket yet']);
  });
});

describe.each(KINDS)('%s: ipKey() through the view', (kind) => {
  const table: [string, Parameters<typeof ipKey>[0], Record<string, string>, string][] = [
    ['no trust: the socket', {}, { 'x-forwarded-for': '203.0.113.7' }, 'ip:127.0.0.1'],
    [
      'trust loopback: the forwarded client',
      { trustProxy: 'loopback' },
      { 'x-forwarded-for': '203.0.113.7' },
      'ip:203.0.113.7',
    ],
    [
      'one hop trusted: the last forwarded entry',
      { trustProxy: 1 },
      { 'x-forwarded-for': '198.51.100.9, 203.0.113.7' },
      'ip:203.0.113.7',
    ],
    ['trust loopback, no header: the socket', { trustProxy: 'loopback' }, {}, 'ip:127.0.0.1'],
    [
      'trusting a range that is not the peer: the socket',
      { trustProxy: ['10.0.0.0/8'] },
      { 'x-forwarded-for': '203.0.113.7' },
      'ip:127.0.0.1',
    ],
  ];
  test.each(table)('%s', async (_name, options, headers, expected) => {
    const address = countedAddress();
    const inner = ipKey(options);
    const keys: (string | undefined)[] = [];
    const key = async (view: RateLimitRequest) => {
      const k = await inner(view);
      keys.push(k);
      return k;
    };
    const url = await start(kind, { key, validate: false }, address);
    expect((await send(url, headers)).status).toBe(200);
    expect((await send(url, headers)).status).toBe(200);
    expect(keys).toEqual([expected, expected]);
    expect(address.calls()).toBe(2);
  });
});
