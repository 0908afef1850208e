// The concurrency middleware on every adapter, with real servers and real requests: the limit
// holds (a denial is a 429 or 503 with Retry-After), a finished response releases its lease, and
// so does a client that disconnects mid-request.
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTERS, type App, Gate, until } from './concurrency-apps.js';
import { steadyMemoryStore } from './support/stores.js';

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
