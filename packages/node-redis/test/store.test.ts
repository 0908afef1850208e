import {
  createLimiter,
  FloodgateError,
  fixedWindow,
  LIMIT_SCRIPT_SHA1,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import { type RedisServer, redisCommand, startRedisServer } from '@floodgate/testkit';
import { createClient as createClient4 } from 'redis4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NodeRedisClientLike, NodeRedisStore } from '../src/index.js';
import { CLIENT_KINDS, type Connected } from './clients.js';
import { commandCalls, delta, keysFor } from './helpers.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

describe.each(CLIENT_KINDS)('NodeRedisStore with $name', (kind) => {
  let conn: Connected<NodeRedisClientLike>;
  beforeAll(async () => {
    conn = await kind.client(server.url);
  });
  afterAll(async () => {
    await conn?.close();
  });
  const tag = kind.name.replace(/\W+/g, '');

  it('sends exactly one EVALSHA per decision and one DEL per reset', async () => {
    const limiter = createLimiter({
      store: new NodeRedisStore(conn.client),
      policy: [tokenBucket({ limit: 5, interval: '1m' }), fixedWindow({ limit: 50, window: '1h' })],
      prefix: `one-${tag}`,
      onStoreError: 'throw',
      blockCache: false,
    });
    await limiter.limit('warm');
    const before = await commandCalls(server.port);
    for (let i = 0; i < 8; i++) await limiter.limit('k');
    await limiter.peek('k');
    await limiter.reset('k');
    expect(delta(before, await commandCalls(server.port))).toEqual({ evalsha: 9, del: 1 });
  });

  it('decides: admits up to the limit, then denies with a retry time, and resets', async () => {
    const policies = [
      tokenBucket({ limit: 3, interval: '1m' }),
      slidingWindowLog({ limit: 5, window: '10s' }),
    ];
    const limiter = createLimiter({
      store: new NodeRedisStore(conn.client),
      policy: policies,
      prefix: `dec-${tag}`,
      onStoreError: 'throw',
      blockCache: false,
    });
    const ds = [];
    for (let i = 0; i < 4; i++) ds.push(await limiter.limit('user:{42}'));
    expect(ds.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 2],
      [true, 1],
      [true, 0],
      [false, 0],
    ]);
    expect(ds[3]!.retryAfterMs).toBeGreaterThan(19_000);
    expect(ds[3]!.retryAfterMs).toBeLessThanOrEqual(20_000);
    const peek = await limiter.peek('user:{42}');
    expect(peek.policies[1]!.remaining).toBe(2);
    for (const k of keysFor(`dec-${tag}`, 'user:{42}', policies)) {
      expect(Number(await redisCommand(server.port, ['PTTL', k]))).toBeGreaterThan(0);
    }
    await limiter.reset('user:{42}');
    expect((await limiter.limit('user:{42}')).remaining).toBe(2);
  });

  it('admits exactly the limit under hundreds of concurrent calls', async () => {
    const limiter = createLimiter({
      store: new NodeRedisStore(conn.client),
      policy: slidingWindowLog({ limit: 37, window: '1h' }),
      prefix: `conc-${tag}`,
      onStoreError: 'throw',
      blockCache: false,
    });
    const ds = await Promise.all(Array.from({ length: 300 }, () => limiter.limit('hot')));
    const admitted = ds.filter((d) => d.allowed);
    expect(admitted.map((d) => d.remaining).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 37 }, (_, i) => i),
    );
  });

  it('reloads the script transparently after SCRIPT FLUSH (EVAL, same arguments)', async () => {
    const limiter = createLimiter({
      store: new NodeRedisStore(conn.client),
      policy: fixedWindow({ limit: 3, window: '1h' }),
      prefix: `nos-${tag}`,
      onStoreError: 'throw',
    });
    await limiter.limit('a');
    await redisCommand(server.port, ['SCRIPT', 'FLUSH']);
    expect(await redisCommand(server.port, ['SCRIPT', 'EXISTS', LIMIT_SCRIPT_SHA1])).toEqual([0]);
    const before = await commandCalls(server.port);
    expect((await limiter.limit('a')).remaining).toBe(1);
    expect((await limiter.limit('a')).remaining).toBe(0);
    expect(delta(before, await commandCalls(server.port))).toEqual({ evalsha: 2, eval: 1 });
  });

  it('turns a closed client into STORE_UNAVAILABLE, and the limiter into its fallback', async () => {
    const own = await kind.client(server.url);
    await own.close();
    const store = new NodeRedisStore(own.client);
    const policy = fixedWindow({ limit: 1, window: '1h' });
    const call = {
      keys: keysFor('closed', 'x', [policy]),
      policies: [policy],
      cost: 1,
      mode: 'limit' as const,
    };
    await expect(store.evaluate(call)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(store.reset(call.keys)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    const limiter = createLimiter({ store, policy });
    const [d1, d2] = [await limiter.limit('x'), await limiter.limit('x')];
    expect([d1.allowed, d1.reason, d2.allowed, d2.reason]).toEqual([
      true,
      'store-unavailable',
      false,
      'store-unavailable',
    ]);
  });
});

describe('NodeRedisStore options', () => {
  it('rejects what is not a node-redis client, and bad options', async () => {
    expect(() => new NodeRedisStore({} as never)).toThrow(FloodgateError);
    const c = createClient4({ url: server.url });
    expect(() => new NodeRedisStore(c, { clock: 'local' as 'server' })).toThrow(/clock/);
    expect(() => new NodeRedisStore(c, { now: 5 as unknown as () => number })).toThrow(/now/);
  });

  it('is remote, and falls back to a fresh MemoryStore', () => {
    const store = new NodeRedisStore(createClient4({ url: server.url }));
    expect(store.remote).toBe(true);
    expect(store.fallback()).toBeInstanceOf(MemoryStore);
    expect(store.fallback()).not.toBe(store.fallback());
  });

  it('rejectIfNotReady fails at once while the client is not connected', async () => {
    const c = createClient4({ url: server.url });
    const policy = fixedWindow({ limit: 1, window: '1h' });
    const call = {
      keys: keysFor('nr', 'x', [policy]),
      policies: [policy],
      cost: 1,
      mode: 'limit' as const,
    };
    const store = new NodeRedisStore(c, { rejectIfNotReady: true });
    await expect(store.evaluate(call)).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: /not ready/,
    });
    await c.connect();
    expect((await store.evaluate(call))[0]!.allowed).toBe(true);
    await c.disconnect();
  });

  it('uses the promise API of a node-redis 4 client in legacyMode', async () => {
    const c = createClient4({ url: server.url, legacyMode: true });
    await c.connect();
    try {
      const limiter = createLimiter({
        store: new NodeRedisStore(c as never),
        policy: fixedWindow({ limit: 2, window: '1h' }),
        prefix: 'legacy',
        onStoreError: 'throw',
      });
      expect((await limiter.limit('x')).remaining).toBe(1);
      expect((await limiter.limit('x')).remaining).toBe(0);
      expect((await limiter.limit('x')).allowed).toBe(false);
    } finally {
      await c.disconnect();
    }
  });
});

describe('NodeRedisStore on a node-redis 5+ client pool', () => {
  it('decides through the pool like through one client', async () => {
    const { createClientPool } = await import('redis');
    const pool = createClientPool({ url: server.url }, { minimum: 2, maximum: 4 });
    pool.on('error', () => {});
    await pool.connect();
    try {
      const limiter = createLimiter({
        store: new NodeRedisStore(pool),
        policy: slidingWindowLog({ limit: 9, window: '1h' }),
        prefix: 'pool',
        onStoreError: 'throw',
        blockCache: false,
      });
      const ds = await Promise.all(Array.from({ length: 40 }, () => limiter.limit('p')));
      expect(ds.filter((d) => d.allowed)).toHaveLength(9);
      await limiter.reset('p');
      expect((await limiter.limit('p')).remaining).toBe(8);
    } finally {
      pool.destroy();
    }
  });
});
