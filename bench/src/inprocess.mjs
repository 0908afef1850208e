// In-process: MemoryStore (every policy) against RateLimiterMemory and express-rate-limit's
// MemoryStore. Sequential awaited calls, a fixed number of iterations, after a warm-up; with
// pre-built key strings and with a fresh key string per decision.
import { identities, KEY_SHAPES, shapedIdentities } from './config.mjs';
import { FRESH_PREFIX, memoryContenders } from './contenders.mjs';
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

/**
 * Every scenario twice: with pre-built key strings (one string object per identity, made before
 * the run, each library's default prefix), and with a fresh key string per decision built from a
 * header value under a prefix, as an HTTP app calls a limiter (contenders.mjs). The issue's
 * targets read the fresh rows (`keyStrings: 'fresh'`).
 * @returns {Promise<{ scenario: string, keyStrings: 'pre-built' | 'fresh', keyCount: number, allowed: boolean, samples: Map<string, number[]> }[]>}
 */
export async function benchInProcess(config, log) {
  const one = identities(1);
  const many = identities(config.keys);
  const base = [
    { what: '1 key', keys: one, limit: NEVER, allowed: true },
    {
      what: `${config.keys.toLocaleString('en-US')} keys`,
      keys: many,
      limit: NEVER,
      allowed: true,
    },
    { what: '1 key over its limit (all denied)', keys: one, limit: 10, allowed: false },
  ];
  const scenarios = [false, true].flatMap((fresh) =>
    base.map((s) => ({
      ...s,
      fresh,
      scenario: `${fresh ? `fresh keys, prefix '${FRESH_PREFIX}'` : 'pre-built keys'}: ${s.what}`,
    })),
  );
  // Fresh keys over many identities of each shape an app counts by (issue 35's targets).
  for (const shape of Object.keys(KEY_SHAPES)) {
    const n = config.keys.toLocaleString('en-US');
    scenarios.push({
      what: `${n} keys, ${shape}`,
      keys: shapedIdentities(shape, config.keys),
      limit: NEVER,
      allowed: true,
      fresh: true,
      shape,
      scenario: `fresh keys, prefix '${FRESH_PREFIX}': ${n} keys, ${shape}`,
    });
  }
  const results = [];
  for (const s of scenarios) {
    log(`  in-process: ${s.scenario}`);
    const warmup = Math.max(config.warmup, s.keys.length, 10);
    const samples = await compare(
      memoryContenders(s.limit, DAY_MS, s.keys, undefined, { fresh: s.fresh }),
      config.repeats,
      runner(s.keys, warmup, config.iterations),
      s.allowed ? (denied) => denied === 0 : (denied, n) => denied === n,
    );
    results.push({
      scenario: s.scenario,
      ...(s.shape === undefined ? {} : { shape: s.shape }),
      keyStrings: s.fresh ? 'fresh' : 'pre-built',
      keyCount: s.keys.length,
      allowed: s.allowed,
      samples,
    });
  }
  return results;
}
