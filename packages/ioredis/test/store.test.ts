import {
  createLimiter,
  FloodgateError,
  fixedWindow,
  LIMIT_SCRIPT_SHA1,
  type Store,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import { type RedisServer, redisCommand, startRedisServer } from '@floodgate/testkit';
import { Redis } from 'ioredis';
import { Redis as Redis6 } from 'ioredis6';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IoRedisStore } from '../src/index.js';
import { commandCalls, delta, keysFor } from './helpers.js';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await server?.stop();
});

const clients = [
  { name: 'ioredis 5', make: (url: string, o = {}) => new Redis(url, o) },
  { name: 'ioredis 6', make: (url: string, o = {}) => new Redis6(url, o) as unknown as Redis },
];

describe.each(clients)('IoRedisStore with $name', ({ name, make }) => {
  let redis: Redis;
  let piped: Redis;
  beforeAll(async () => {
    redis = make(server.url);
    piped = make(server.url, { enableAutoPipelining: true });
    await Promise.all([redis.ping(), piped.ping()]);
  });
  afterAll(() => {
    redis.disconnect();
    piped.disconnect();
  });

  it('sends exactly one EVALSHA per decision and one DEL per reset', async () => {
    const limiter = createLimiter({
      store: new IoRedisStore(redis),
      policy: [tokenBucket({ limit: 5, interval: '1m' }), fixedWindow({ limit: 50, window: '1h' })],
      prefix: `one-${name}`,
      onStoreError: 'throw',
      blockCache: false,
    });
    await limiter.limit('warm'); // the script is cached from here on
    const before = await commandCalls(server.port);
    for (let i = 0; i < 8; i++) await limiter.limit('k');
    await limiter.peek('k');
    await limiter.reset('k');
    const d = delta(before, await commandCalls(server.port));
    expect(d).toEqual({ evalsha: 9, del: 1 });
  });

  it('keeps every key of an identity in one slot and under a TTL', async () => {
    const policies = [
      tokenBucket({ limit: 5, interval: '1m' }),
      slidingWindowLog({ limit: 3, window: '10s' }),
    ];
    const limiter = createLimiter({
      store: new IoRedisStore(redis),
      policy: policies,
      prefix: `slot-${name}`,
    });
    await limiter.limit('user:{42}');
    const keys = keysFor(`slot-${name}`, 'user:{42}', policies);
    expect(keys[0]).toMatch(/^slot-.*:\{user:%7B42%7D\}:tb:/);
    for (const k of keys) {
      const ttl = await redis.pttl(k);
      expect(ttl).toBeGreaterThan(0);
    }
    expect(
      await redis.call('CLUSTER', 'KEYSLOT', keys[0]!).catch(() => 'no cluster'),
    ).toBeDefined();
  });

  it('works with ioredis keyPrefix (keys are prefixed by the client, script sees them)', async () => {
    const prefixed = make(server.url, { keyPrefix: `kp-${name}:` });
    try {
      const limiter = createLimiter({
        store: new IoRedisStore(prefixed),
        policy: fixedWindow({ limit: 2, window: '1h' }),
        onStoreError: 'throw',
      });
      expect((await limiter.limit('x')).allowed).toBe(true);
      expect((await limiter.limit('x')).allowed).toBe(true);
      expect((await limiter.limit('x')).allowed).toBe(false);
      expect(await redis.keys(`kp-${name}:*`)).toHaveLength(1);
      await limiter.reset('x');
      expect(await redis.keys(`kp-${name}:*`)).toHaveLength(0);
    } finally {
      prefixed.disconnect();
    }
  });

  it('admits exactly the limit under hundreds of concurrent auto-pipelined calls', async () => {
    const limiter = createLimiter({
      store: new IoRedisStore(piped),
      policy: slidingWindowLog({ limit: 37, window: '1h' }),
      prefix: `conc-${name}`,
      onStoreError: 'throw',
      blockCache: false,
    });
    const before = await commandCalls(server.port);
    const ds = await Promise.all(Array.from({ length: 300 }, () => limiter.limit('hot')));
    expect(ds.filter((d) => d.allowed)).toHaveLength(37);
    const remaining = ds
      .filter((d) => d.allowed)
      .map((d) => d.remaining)
      .sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 37 }, (_, i) => i));
    const d = delta(before, await commandCalls(server.port));
    expect(d.evalsha).toBe(300);
  });

  it('reloads the script transparently after SCRIPT FLUSH (EVAL, same arguments)', async () => {
    const store = new IoRedisStore(redis);
    const limiter = createLimiter({
      store,
      policy: fixedWindow({ limit: 3, window: '1h' }),
      prefix: `nos-${name}`,
      onStoreError: 'throw',
    });
    await limiter.limit('a');
    await redisCommand(server.port, ['SCRIPT', 'FLUSH']);
    expect(await redisCommand(server.port, ['SCRIPT', 'EXISTS', LIMIT_SCRIPT_SHA1])).toEqual([0]);
    const before = await commandCalls(server.port);
    expect((await limiter.limit('a')).remaining).toBe(1);
    expect((await limiter.limit('a')).remaining).toBe(0);
    const d = delta(before, await commandCalls(server.port));
    // One failed EVALSHA, one EVAL that runs and caches the script, then EVALSHA again.
    expect(d).toEqual({ evalsha: 2, eval: 1 });
  });
});

describe('IoRedisStore errors and options', () => {
  it('rejects what is not an ioredis client, and bad options', () => {
    expect(() => new IoRedisStore({} as Redis)).toThrow(FloodgateError);
    const redis = new Redis(server.url, { lazyConnect: true });
    expect(() => new IoRedisStore(redis, { clock: 'local' as 'server' })).toThrow(/clock/);
    expect(() => new IoRedisStore(redis, { now: 5 as unknown as () => number })).toThrow(/now/);
    redis.disconnect();
  });

  it('is remote, and falls back to a fresh MemoryStore', () => {
    const redis = new Redis(server.url, { lazyConnect: true });
    const store = new IoRedisStore(redis);
    expect(store.remote).toBe(true);
    const a = store.fallback();
    expect(a).toBeInstanceOf(MemoryStore);
    expect(store.fallback()).not.toBe(a);
    redis.disconnect();
  });

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
    const store = new IoRedisStore(redis);
    const policy = fixedWindow({ limit: 1, window: '1h' });
    const call = {
      keys: keysFor('dead', 'x', [policy]),
      policies: [policy],
      cost: 1,
      mode: 'limit' as const,
    };
    await expect(store.evaluate(call)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    await expect(store.reset(call.keys)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    const errors: FloodgateError[] = [];
    const limiter = createLimiter({ store, policy, onError: (e) => errors.push(e) });
    const d1 = await limiter.limit('x');
    const d2 = await limiter.limit('x');
    expect([d1.allowed, d1.reason, d2.allowed, d2.reason]).toEqual([
      true,
      'store-unavailable',
      false,
      'store-unavailable',
    ]);
    expect(errors.map((e) => e.code)).toEqual(['STORE_UNAVAILABLE', 'STORE_UNAVAILABLE']);
    redis.disconnect();
  });

  it('rejectIfNotReady fails at once while the client is not connected', async () => {
    const redis = new Redis(server.url, { lazyConnect: true });
    const policy = fixedWindow({ limit: 1, window: '1h' });
    const call = {
      keys: keysFor('nr', 'x', [policy]),
      policies: [policy],
      cost: 1,
      mode: 'limit' as const,
    };
    const strict: Store = new IoRedisStore(redis, { rejectIfNotReady: true });
    await expect(strict.evaluate(call)).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      message: /not ready: wait/,
    });
    await redis.connect();
    expect((await strict.evaluate(call))[0]!.allowed).toBe(true);
    redis.disconnect();
  });
});
