// In-process: @floodgate/core + @floodgate/memory against rate-limiter-flexible's
// RateLimiterMemory. Sequential awaited calls, a fixed number of iterations, after a warm-up.
import { createLimiter, fixedWindow, tokenBucket } from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { identities } from './config.mjs';
import { collectGarbage, compare, sequential } from './measure.mjs';

// So large that no allowed-path scenario ever reaches it: every timed decision is an admission.
const NEVER = 1_000_000_000;
const HOUR_S = 3600;

/**
 * The three contenders for a limit of `limit` per hour. rate-limiter-flexible has one algorithm
 * (a fixed window that starts at the key's first request), so it is the peer of both Floodgate
 * policies.
 */
function contenders(limit, keys) {
  const floodgate = (policy) => async () => {
    const limiter = createLimiter({ store: new MemoryStore(), policy });
    return { decide: (key) => limiter.limit(key) };
  };
  return [
    {
      name: 'tokenBucket',
      setup: floodgate(tokenBucket({ limit, interval: '1h' })),
    },
    {
      name: 'fixedWindow',
      setup: floodgate(fixedWindow({ limit, window: '1h' })),
    },
    {
      name: 'peer',
      setup: async () => {
        const rl = new RateLimiterMemory({ points: limit, duration: HOUR_S });
        return {
          decide: (key) => rl.consume(key),
          // Its MemoryStorage arms one (unref'd) timer per key; clear them so they do not pile
          // up under the next runs.
          teardown: async () => {
            for (const key of keys) await rl.delete(key);
          },
        };
      },
    },
  ];
}

function runner(keys, warmup, iterations) {
  return async (decide) => {
    await sequential(decide, keys, warmup);
    collectGarbage();
    const { ns, denied } = await sequential(decide, keys, iterations);
    return { ns, denied, iterations };
  };
}

/** @returns {Promise<{ scenario: string, samples: Map<string, number[]> }[]>} */
export async function benchInProcess(config, log) {
  const one = identities(1);
  const many = identities(config.keys);
  const warmupMany = Math.max(config.warmup, config.keys);
  const scenarios = [
    {
      scenario: '1 key',
      keys: one,
      limit: NEVER,
      warmup: config.warmup,
      allowed: true,
    },
    {
      scenario: `${config.keys.toLocaleString('en-US')} keys`,
      keys: many,
      limit: NEVER,
      warmup: warmupMany,
      allowed: true,
    },
    {
      scenario: '1 key, over its limit (every decision a denial)',
      keys: one,
      limit: 10,
      warmup: Math.max(config.warmup, 10),
      allowed: false,
    },
  ];
  const results = [];
  for (const s of scenarios) {
    log(`  in-process: ${s.scenario}`);
    const samples = await compare(
      contenders(s.limit, s.keys),
      config.repeats,
      runner(s.keys, s.warmup, config.iterations),
      s.allowed ? (denied) => denied === 0 : (denied, n) => denied === n,
    );
    results.push({ scenario: s.scenario, samples });
  }
  return results;
}
