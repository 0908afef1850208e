import { createLimiter, fixedWindow } from '@floodgate/core';
import { IoRedisStore } from '@floodgate/ioredis';
import { type RedisServer, startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { rateLimit } from '../src/node/index.js';
import { nodeHarness } from './adapters/node.js';
import { behaviouralSuite } from './suite/index.js';
import { send } from './support/context.js';
import type { StoreFactory } from './support/harness.js';

// A real redis-server on a free loopback port, shared by every limiter of this file (each with
// its own key prefix).
let server: RedisServer;
const clients: Redis[] = [];
const open = (): Redis => {
  const client = new Redis(server.url, { lazyConnect: false, maxRetriesPerRequest: 1 });
  clients.push(client);
  return client;
};

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await server?.stop();
});

let shared: Redis | undefined;
const redisStores: StoreFactory = {
  name: 'IoRedisStore (real redis-server)',
  make: (now) => {
    shared ??= open();
    return new IoRedisStore(shared, now === undefined ? {} : { clock: 'client', now });
  },
};

behaviouralSuite(nodeHarness, redisStores);

describe('two app servers on one redis-server share one limit', () => {
  test("the second server sees the first one's count", async () => {
    const limiter = () =>
      createLimiter({
        store: new IoRedisStore(open()),
        policy: fixedWindow({ name: 'shared', limit: 3, window: '1m' }),
        prefix: `http-shared-${process.pid}`,
        timeoutMs: 10_000, // exact counts, not the deadline, are under test
      });
    const a = await nodeHarness.start({ limiter: limiter() });
    const b = await nodeHarness.start({ limiter: limiter() });
    try {
      const statuses = [];
      for (const app of [a, b, a, b]) statuses.push((await send(app.url)).status);
      expect(statuses).toEqual([200, 200, 200, 429]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('a redis-server that was stopped', () => {
  test('fail-closed answers 503; fail-open passes; the default fallback keeps limiting', async () => {
    const dead = await startRedisServer();
    const client = new Redis(dead.url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
    client.on('error', () => {});
    clients.push(client);
    await new Promise((resolve) => client.once('ready', resolve));
    expect(await client.ping()).toBe('PONG');
    await dead.stop();
    const policy = fixedWindow({ name: 'p', limit: 1, window: '1m' });
    const store = new IoRedisStore(client, { rejectIfNotReady: true });
    const apps = await Promise.all([
      nodeHarness.start({ policy, store, onStoreError: 'throw', timeoutMs: 1000 }),
      nodeHarness.start({
        policy,
        store,
        onStoreError: 'throw',
        timeoutMs: 1000,
        onLimiterError: 'fail-open',
      }),
      nodeHarness.start({ policy, store, timeoutMs: 1000 }),
    ]);
    try {
      expect((await send(apps[0].url)).status).toBe(503);
      expect((await send(apps[1].url)).status).toBe(200);
      // The store's own fallback (an in-process MemoryStore): the limit holds per process.
      expect([(await send(apps[2].url)).status, (await send(apps[2].url)).status]).toEqual([
        200, 429,
      ]);
    } finally {
      await Promise.all(apps.map((a) => a.close()));
    }
  });

  test('the middleware options reach the limiter: rateLimit builds it from policy + store', () => {
    expect(() =>
      rateLimit({
        policy: fixedWindow({ limit: 1, window: '1s' }),
        store: new IoRedisStore(open()),
        timeoutMs: -1,
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });
});
