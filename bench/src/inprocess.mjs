// In-process: MemoryStore (every policy) against RateLimiterMemory and express-rate-limit's
// MemoryStore. Sequential awaited calls, a fixed number of iterations, after a warm-up.
import { identities } from './config.mjs';
import { memoryContenders } from './contenders.mjs';
import { collectGarbage, compare, sequential } from './measure.mjs';

// Never reached in a run, and small enough that every policy keeps its Redis state int-encoded.
const NEVER = 500_000;
const DAY_MS = 86_400_000;

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
  const scenarios = [
    { scenario: '1 key', keys: one, limit: NEVER, allowed: true },
    {
      scenario: `${config.keys.toLocaleString('en-US')} keys`,
      keys: many,
      limit: NEVER,
      allowed: true,
    },
    { scenario: '1 key over its limit (all denied)', keys: one, limit: 10, allowed: false },
  ];
  const results = [];
  for (const s of scenarios) {
    log(`  in-process: ${s.scenario}`);
    const warmup = Math.max(config.warmup, s.keys.length, 10);
    const samples = await compare(
      memoryContenders(s.limit, DAY_MS, s.keys),
      config.repeats,
      runner(s.keys, warmup, config.iterations),
      s.allowed ? (denied) => denied === 0 : (denied, n) => denied === n,
    );
    results.push({ scenario: s.scenario, samples });
  }
  return results;
}
