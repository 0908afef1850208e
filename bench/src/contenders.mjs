// Who is measured: every Floodgate policy, and the peers, built the same way for the in-process
// and the Redis sections. Each contender is { name, setup } where setup() returns
// { decide(key) → Promise, teardown?() }.
import {
  createLimiter,
  fixedWindow,
  leakyBucket,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { IoRedisStore } from '@floodgate/ioredis';
import { MemoryStore } from '@floodgate/memory';
import { MemoryStore as ErlMemoryStore } from 'express-rate-limit';
import { RedisStore as RateLimitRedis } from 'rate-limit-redis';
import { RateLimiterMemory, RateLimiterRedis } from 'rate-limiter-flexible';

export const RLF = 'rate-limiter-flexible';
export const ERL = 'express-rate-limit';
export const ERL_REDIS = 'rate-limit-redis';
export const POLICIES = [
  'tokenBucket',
  'fixedWindow',
  'slidingWindow',
  'slidingWindowLog',
  'leakyBucket',
  'quota',
];

/**
 * Floodgate's policies for `limit` per `ms`. The exact log takes at most 10 000 per window
 * (MAX_LOG_LIMIT), so where `limit` must never be reached it gets 10 000 per 1 ms instead:
 * 10 M decisions/s, faster than any contender decides, so it too admits every timed call (at
 * 10 000 per 2 ms a quiet machine deciding one pre-built key in-process now and then hit it).
 */
export function policyOf(name, limit, ms) {
  switch (name) {
    case 'tokenBucket':
      return tokenBucket({ limit, interval: ms });
    case 'fixedWindow':
      return fixedWindow({ limit, window: ms });
    case 'slidingWindow':
      return slidingWindow({ limit, window: ms });
    case 'slidingWindowLog':
      return limit > 10_000
        ? slidingWindowLog({ limit: 10_000, window: '1ms' })
        : slidingWindowLog({ limit, window: ms });
    case 'leakyBucket':
      return leakyBucket({ limit, interval: ms, queue: limit });
    case 'quota':
      // Calendar periods: `limit` per UTC day, whatever `ms` (its windows are days already).
      return quota({ limit, per: 'day' });
  }
  throw new Error(`unknown policy ${name}`);
}

// express-rate-limit's stores count hits and leave the decision to the middleware: a hit over
// the limit is a denial, as the middleware would answer it.
const erlDecide = (store, limit) => async (key) => {
  const { totalHits } = await store.increment(key);
  return { allowed: totalHits <= limit };
};

/** The header an app would count by in the fresh-key rows (`headerKey`'s layout). */
export const FRESH_PREFIX = 'api';

/**
 * In-process: MemoryStore per policy, RateLimiterMemory, express-rate-limit's MemoryStore.
 * `keys` are what the loop passes to `decide`. Pre-built (the default): each is the key itself,
 * one string object per identity, made before the run, and each library keeps its default
 * prefix. With `fresh`, each is a header value and every decision builds its key from it, as an
 * HTTP app does (`header:x-api-key:${value}`, the layout of @floodgate/http's `headerKey`): a
 * new string per decision, whose hash no earlier lookup cached. Floodgate then gets
 * `prefix: FRESH_PREFIX` and RateLimiterMemory the same `keyPrefix`; express-rate-limit's store
 * belongs to one middleware and has no prefix, so it gets the key as the app built it.
 */
export function memoryContenders(limit, ms, keys, policies = POLICIES, { fresh = false } = {}) {
  const prefix = fresh ? { prefix: FRESH_PREFIX } : {};
  return [
    ...policies.map((name) => ({
      name,
      setup: async () => {
        const limiter = createLimiter({
          store: new MemoryStore(),
          policy: policyOf(name, limit, ms),
          ...prefix,
        });
        return {
          decide: fresh
            ? (value) => limiter.limit(`header:x-api-key:${value}`)
            : (key) => limiter.limit(key),
        };
      },
    })),
    {
      name: RLF,
      setup: async () => {
        const rl = new RateLimiterMemory({
          points: limit,
          duration: ms / 1000,
          ...(fresh ? { keyPrefix: FRESH_PREFIX } : {}),
        });
        return {
          decide: fresh
            ? (value) => rl.consume(`header:x-api-key:${value}`)
            : (key) => rl.consume(key),
          // One (unref'd) timer per key: cleared so they do not pile up under later runs.
          teardown: async () => {
            for (const key of keys) await rl.delete(fresh ? `header:x-api-key:${key}` : key);
          },
        };
      },
    },
    {
      name: ERL,
      setup: async () => {
        const store = new ErlMemoryStore();
        store.init({ windowMs: ms });
        const decide = erlDecide(store, limit);
        return {
          decide: fresh ? (value) => decide(`header:x-api-key:${value}`) : decide,
          teardown: () => store.shutdown(),
        };
      },
    },
  ];
}

/** Redis: IoRedisStore per policy, RateLimiterRedis, rate-limit-redis; one shared connection. */
export function redisContenders(redis, client, limit, ms, policies = POLICIES, options = {}) {
  // With `samePrefix`, every library writes `floodgate:` + identity (+ its own suffix), so key
  // sizes compare like for like.
  const same = options.samePrefix === true;
  const limiterOptions = options.limiter ?? {};
  const flush = () => redis.admin.flushall('SYNC');
  const floodgate = (name, policy, storeOptions) => ({
    name,
    setup: async () => {
      await flush();
      const limiter = createLimiter({
        store: new IoRedisStore(client, storeOptions),
        policy: policyOf(policy, limit, ms),
        ...limiterOptions,
      });
      return { decide: (key) => limiter.limit(key) };
    },
  });
  return [
    ...policies.map((name) => floodgate(name, name)),
    // With `batchRows`, the store's `batch` option both ways, whatever its default.
    ...(options.batchRows === true
      ? [
          floodgate('tokenBucket, batch off', 'tokenBucket', { batch: false }),
          floodgate('tokenBucket, batch on', 'tokenBucket', { batch: true }),
        ]
      : []),
    {
      name: RLF,
      setup: async () => {
        await flush();
        const rl = new RateLimiterRedis({
          storeClient: client,
          useRedisPackage: false,
          points: limit,
          duration: ms / 1000,
          ...(same ? { keyPrefix: 'floodgate' } : {}),
        });
        return { decide: (key) => rl.consume(key) };
      },
    },
    {
      name: ERL_REDIS,
      setup: async () => {
        await flush();
        const store = new RateLimitRedis({
          sendCommand: (...args) => client.call(...args),
          ...(same ? { prefix: 'floodgate:' } : {}),
        });
        store.init({ windowMs: ms });
        return { decide: erlDecide(store, limit) };
      },
    },
  ];
}
