// concurrencyLimit when Redis stalls (issue 30, item 4), on every adapter with a real server and
// a real redis-server behind a fault proxy: with the limiter's defaults the in-process fallback
// keeps the in-flight limit (requests get 200 or 429, never 503), and a request answered 503
// (`onStoreError: 'throw'`) holds no slot, even once Redis runs its acquire after healing.
import {
  type ConcurrencyLimiterOptions,
  createConcurrencyLimiter,
} from '@floodgate/core/concurrency';
import { IoRedisStore } from '@floodgate/ioredis';
import {
  commandCalls,
  type FaultProxy,
  type RedisServer,
  redisCommand,
  startFaultProxy,
  startRedisServer,
} from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS, type App, Gate, until } from './concurrency-apps.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

const cleanups: (() => unknown)[] = [];
const gates: Gate[] = [];
afterEach(async () => {
  for (const gate of gates.splice(0)) gate.open();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let n = 0;
/** A limiter (limit 2, 1-minute leases) on Redis through a fresh proxy, and an app on it. */
async function setUp(adapter: string, options: Partial<ConcurrencyLimiterOptions> = {}) {
  const proxy: FaultProxy = await startFaultProxy({ target: server });
  cleanups.push(() => proxy.close());
  const client = new Redis(proxy.url, { retryStrategy: () => 50 }).on('error', () => {});
  cleanups.push(() => client.disconnect());
  const limiter = createConcurrencyLimiter({
    store: new IoRedisStore(client),
    limit: 2,
    leaseMs: '1m',
    prefix: `http-out-${process.pid}-${++n}`,
    ...options,
  });
  await (await limiter.acquire('warm')).release(); // connected, and Redis's clock known
  const gate = new Gate();
  gates.push(gate);
  const app: App = await ADAPTERS[adapter]!({ limiter }, gate);
  cleanups.push(() => app.close());
  const evalsha = async () => (await commandCalls(server.port)).evalsha ?? 0;
  const zadd = async () => (await commandCalls(server.port)).zadd ?? 0;
  return { proxy, limiter, gate, app, evalsha, zadd };
}

describe.each(Object.keys(ADAPTERS))('%s: concurrencyLimit while Redis stalls', (name) => {
  it('the fallback keeps the limit: 200s and a 429, no 503; the stalled acquires grant nothing once delivered', async () => {
    const { proxy, limiter, gate, app, evalsha, zadd } = await setUp(name);
    const ran = await evalsha();
    const wrote = await zadd();
    proxy.set('stall');
    const slow = [fetch(`${app.url}/slow`), fetch(`${app.url}/slow`)];
    await until('two handlers running', () => gate.entered === 2);
    const denied = await fetch(`${app.url}/fast`);
    expect(denied.status).toBe(429);
    expect(Number(denied.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    gate.open();
    for (const res of await Promise.all(slow)) expect(res.status).toBe(200);
    // Released into the fallback, where they were granted: a slot is free again.
    const again = await fetch(`${app.url}/fast`);
    expect([again.status, await again.text()]).toEqual([200, 'ok']);
    proxy.set('none');
    await until('the held acquires reached Redis', async () => (await evalsha()) - ran >= 4);
    expect((await zadd()) - wrote).toBe(0);
    expect(await redisCommand(server.port, ['EXISTS', limiter.key('client')])).toBe(0);
  });

  it("onStoreError 'throw': 503, and the request holds no slot once Redis runs its acquire", async () => {
    const { proxy, limiter, app, evalsha, zadd } = await setUp(name, {
      onStoreError: 'throw',
      breaker: false,
    });
    const ran = await evalsha();
    const wrote = await zadd();
    proxy.set('stall');
    const res = await fetch(`${app.url}/fast`);
    expect(res.status).toBe(503);
    proxy.set('none');
    await until('the held acquire reached Redis', async () => (await evalsha()) > ran);
    await new Promise((resolve) => setTimeout(resolve, 50)); // room for a release, were one due
    expect((await zadd()) - wrote).toBe(0);
    expect(await redisCommand(server.port, ['EXISTS', limiter.key('client')])).toBe(0);
  });
});
