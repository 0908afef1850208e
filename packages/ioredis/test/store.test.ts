import { createLimiter, fixedWindow } from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import {
  expectStoreUnavailable,
  redisCommand,
  redisStoreTests,
  startRedisServer,
  useRedisServer,
} from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { Redis as Redis6 } from 'ioredis6';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IoRedisStore } from '../src/index.js';
import { ADAPTERS } from './adapters.js';

// The behaviour every Redis store shares, on ioredis 5 and 6.
redisStoreTests(
  { describe, it, expect, beforeAll, afterAll },
  { adapters: ADAPTERS, fallback: MemoryStore },
);

// What only ioredis has.
const server = useRedisServer({ beforeAll, afterAll });

const clients = [
  { name: 'ioredis 5', make: (url: string, o = {}) => new Redis(url, o) },
  { name: 'ioredis 6', make: (url: string, o = {}) => new Redis6(url, o) as unknown as Redis },
];

describe.each(clients)('IoRedisStore with $name', ({ name, make }) => {
  it('works with ioredis keyPrefix (keys are prefixed by the client, script sees them)', async () => {
    const prefixed = make(server().url, { keyPrefix: `kp-${name}:` });
    const keys = async () => redisCommand(server().port, ['KEYS', `kp-${name}:*`]);
    try {
      const limiter = createLimiter({
        store: new IoRedisStore(prefixed),
        policy: fixedWindow({ limit: 2, window: '1h' }),
        onStoreError: 'throw',
      });
      expect((await limiter.limit('x')).allowed).toBe(true);
      expect((await limiter.limit('x')).allowed).toBe(true);
      expect((await limiter.limit('x')).allowed).toBe(false);
      expect(await keys()).toHaveLength(1);
      await limiter.reset('x');
      expect(await keys()).toHaveLength(0);
      // The first alone, the other three made while it is in flight batched (one EVALSHA):
      // ioredis prefixes every key of the batch too.
      const ds = await Promise.all(['y', 'y', 'z', 'y'].map((id) => limiter.limit(id)));
      expect(ds.map((d) => d.allowed)).toEqual([true, true, true, false]);
      expect(await keys()).toHaveLength(2);
    } finally {
      prefixed.disconnect();
    }
  });
});

describe('IoRedisStore errors', () => {
  it('turns a refused connection into STORE_UNAVAILABLE, and the limiter into its fallback', async () => {
    const dead = await startRedisServer();
    const port = dead.port;
    await dead.stop();
    const redis = new Redis(port, '127.0.0.1', {
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      lazyConnect: true,
    });
    redis.on('error', () => {});
    try {
      await expectStoreUnavailable(expect, new IoRedisStore(redis), 'dead');
    } finally {
      redis.disconnect();
    }
  });
});
