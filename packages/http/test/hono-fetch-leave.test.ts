// Hono and fetch: a client that leaves gives back what its request held, a queue place
// (rateLimit's delay, whose signal the adapters read only when a request is held) or a
// concurrency lease. Real servers and real requests.
import { createLimiter, leakyBucket } from '@floodgate/core';
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import type { Http2Bindings, HttpBindings } from '@hono/node-server';
import { Hono } from 'hono';
import { afterEach, describe, expect, test } from 'vitest';
import {
  concurrencyLimit as fetchConcurrency,
  rateLimit as fetchRateLimit,
} from '../src/fetch/index.js';
import {
  concurrencyLimit as honoConcurrency,
  rateLimit as honoRateLimit,
} from '../src/hono/index.js';
import { ipKey, type RateLimitOptions } from '../src/index.js';
import { closeServed, serveLoopback } from './adapters/hono.js';
import { send, sendAndHangUp, sleep } from './support/context.js';
import { steadyMemoryStore } from './support/stores.js';

/** What @hono/node-server passes a fetch handler after the request (its socket). */
type Bindings = HttpBindings | Http2Bindings;
type Kind = 'hono' | 'fetch';
const KINDS: readonly Kind[] = ['hono', 'fetch'];

// Gates a test left shut, opened before the servers close (a held handler would keep one open).
const gates: (() => void)[] = [];
afterEach(async () => {
  for (const open of gates.splice(0)) open();
  await closeServed();
});
const serve = serveLoopback;

/** Polls `check` (up to 10 s: a loaded machine is slow, nothing here is timed). */
async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await sleep(10);
  if (!check()) throw new Error(`timed out waiting: ${what}`);
}

describe.each(KINDS)('%s: a client that leaves gives back what it held', (kind) => {
  test('rateLimit: its place in the queue (maxQueued) while its turn was still to come', async () => {
    const limiter = createLimiter({
      store: steadyMemoryStore(),
      policy: leakyBucket({ name: 'queue', limit: 1, interval: '1s', queue: 10 }),
    });
    let handled = 0;
    const options: RateLimitOptions = { limiter, key: () => 'k', maxQueued: 1 };
    let url: string;
    if (kind === 'hono') {
      const app = new Hono();
      app.use('*', honoRateLimit(options));
      app.get('/', (c) => c.text(`handled ${++handled}`));
      url = await serve(app.fetch);
    } else {
      url = await serve(
        fetchRateLimit(options).wrap(async () => new Response(`handled ${++handled}`)),
      );
    }
    expect((await send(url)).text).toBe('handled 1');
    // Held for its turn about a second away; the client hangs up before it comes.
    await sendAndHangUp(url, 300);
    await sleep(300);
    // The only queue place is free again: this one is held too, not refused.
    const r = await send(url);
    expect([r.status, r.text]).toEqual([200, 'handled 2']);
    expect(handled).toBe(2);
  });

  test('concurrencyLimit: its lease, keyed by the address the view read', async () => {
    const store = steadyMemoryStore();
    const limiter = createConcurrencyLimiter({ store, limit: 1, leaseMs: '1m' });
    let entered = 0;
    let finish: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      finish = resolve;
    });
    gates.push(() => finish());
    const slow = async () => {
      entered++;
      await gate;
    };
    let url: string;
    if (kind === 'hono') {
      const app = new Hono();
      app.use('*', honoConcurrency({ limiter, key: ipKey() }));
      app.get('/', async (c) => {
        await slow();
        return c.text('ok');
      });
      url = await serve(app.fetch);
    } else {
      const inFlight = fetchConcurrency<[Bindings]>({
        limiter,
        key: ipKey(),
        getAddress: (_request, env) => env.incoming.socket.remoteAddress,
      });
      url = await serve(
        inFlight.wrap(async () => {
          await slow();
          return new Response('ok');
        }),
      );
    }
    const held = () => store.leasesHeld(limiter.key('ip:127.0.0.1'));
    const abort = new AbortController();
    const gone = fetch(url, { signal: abort.signal }).catch((e: Error) => e.name);
    await until('the handler runs', () => entered === 1);
    expect(held()).toBe(1);
    expect((await send(url)).status).toBe(429);
    abort.abort();
    expect(await gone).toBe('AbortError');
    await until('the lease released', () => held() === 0);
    finish();
    const r = await send(url);
    expect([r.status, r.text]).toEqual([200, 'ok']);
    await until('released after the answer', () => held() === 0);
  });
});
