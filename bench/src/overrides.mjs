// What per-identity overrides cost per decision: one limiter without them, the same with
// `overrides: true` and nothing stored (each decision also reads its override key), and with an
// override in force for every identity (each decision runs on it). In-process (MemoryStore) and
// on Redis through ioredis, sequential and at the largest BENCH_CONCURRENCY in flight; on Redis
// also the server's µs per decision (INFO commandstats, EVALSHA and EVAL).
import { createLimiter, tokenBucket } from '@floodgate/core';
import { IoRedisStore } from '@floodgate/ioredis';
import { MemoryStore } from '@floodgate/memory';
import { identities } from './config.mjs';
import { collectGarbage, compare, concurrent, median, sequential } from './measure.mjs';
import { commandStats } from './redis.mjs';

// Never reached in a run; the override raises it further, so every decision is admitted.
const NEVER = 500_000;
const HOUR = 3_600_000;

export const WITHOUT = 'without overrides';
const ROWS = [
  { name: WITHOUT, overrides: false, stored: false },
  { name: 'overrides on, none stored', overrides: true, stored: false },
  { name: 'overrides on, one in force per identity', overrides: true, stored: true },
];

/** The three limiters on stores `makeStore` builds; `flush` empties the store between runs. */
function contenders(makeStore, keys, flush, usec) {
  return ROWS.map((row) => ({
    name: row.name,
    setup: async () => {
      await flush?.();
      const limiter = createLimiter({
        store: makeStore(),
        policy: tokenBucket({ limit: NEVER, interval: '1d' }),
        ...(row.overrides ? { overrides: true } : {}),
      });
      if (row.stored) {
        const until = Date.now() + HOUR;
        for (let i = 0; i < keys.length; i += 500) {
          await Promise.all(
            keys.slice(i, i + 500).map((k) => limiter.override(k, { limit: 2 * NEVER, until })),
          );
        }
      }
      const decide = (key) => limiter.limit(key);
      usec?.label(decide, row.name);
      return { decide };
    },
  }));
}

/** Redis µs of the scripts a run sent, per decision, by contender (when `redis` is given). */
function serverTime(redis) {
  const names = new WeakMap();
  const runs = new Map(ROWS.map((r) => [r.name, []]));
  const scripts = async () => {
    const stats = commandStats(await redis.admin.info('commandstats'));
    return (stats.get('evalsha')?.usec ?? 0) + (stats.get('eval')?.usec ?? 0);
  };
  return {
    label: (decide, name) => names.set(decide, name),
    async around(decide, timed) {
      const before = await scripts();
      const out = await timed();
      const used = (await scripts()) - before;
      runs.get(names.get(decide))?.push(used / out.iterations);
      return out;
    },
    perDecision: () => new Map([...runs].map(([n, v]) => [n, median(v)])),
  };
}

/**
 * @returns {Promise<{ scenario: string, samples: Map<string, number[]>, redisUs?: Map<string, number> }[]>}
 */
export async function benchOverrides(config, redis, log) {
  const results = [];
  const many = identities(config.redisKeys);
  {
    log('  overrides: in-process');
    const keys = identities(config.keys);
    const samples = await compare(
      contenders(() => new MemoryStore(), keys),
      config.repeats,
      async (decide) => {
        await sequential(decide, keys, Math.max(config.warmup, keys.length));
        collectGarbage();
        const { ns, denied } = await sequential(decide, keys, config.iterations);
        return { ns, denied, iterations: config.iterations };
      },
      (denied) => denied === 0,
    );
    results.push({ scenario: `in-process, ${keys.length.toLocaleString('en-US')} keys`, samples });
  }
  const inFlight = Math.max(...config.concurrency);
  for (const [scenario, c] of [
    ['Redis, sequential (1 in flight)', 1],
    [`Redis, ${inFlight} in flight (autoPipelining)`, inFlight],
  ]) {
    log(`  overrides: ${scenario}`);
    const client = await redis.client(c > 1);
    const usec = serverTime(redis);
    try {
      const n = c > 1 ? config.redisConcurrentIterations : config.redisIterations;
      const loop = (decide, count) =>
        c > 1 ? concurrent(decide, many, count, c) : sequential(decide, many, count);
      const samples = await compare(
        contenders(
          () => new IoRedisStore(client),
          many,
          () => redis.admin.flushall('SYNC'),
          usec,
        ),
        config.repeats,
        async (decide) => {
          await loop(decide, Math.max(config.redisWarmup, many.length));
          collectGarbage();
          return usec.around(decide, async () => ({ ...(await loop(decide, n)), iterations: n }));
        },
        (denied) => denied === 0,
      );
      results.push({ scenario, samples, redisUs: usec.perDecision() });
    } finally {
      client.disconnect();
    }
  }
  return results;
}
