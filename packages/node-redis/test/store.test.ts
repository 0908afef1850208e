import { createLimiter, fixedWindow, slidingWindowLog } from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import { redisStoreTests, useRedisServer } from '@floodgate/testkit/redis';
import { createClient as createClient4 } from 'redis4';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeRedisStore } from '../src/index.js';
import { ADAPTERS } from './adapters.js';

// The behaviour every Redis store shares, on every node-redis generation.
redisStoreTests(
  { describe, it, expect, beforeAll, afterAll },
  { adapters: ADAPTERS, fallback: MemoryStore },
);

// What only node-redis has.
const server = useRedisServer({ beforeAll, afterAll });

describe('NodeRedisStore options', () => {
  it('uses the promise API of a node-redis 4 client in legacyMode', async () => {
    const c = createClient4({ url: server().url, legacyMode: true });
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
    const pool = createClientPool({ url: server().url }, { minimum: 2, maximum: 4 });
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
