// The limiter's blocked-key cache on a Redis store: a hot identity over its limit, with and
// without the cache (with it, denials are answered in-process until their retry time), and an
// all-admitted stream, where the cache can only cost.
import { identities } from './config.mjs';
import { redisContenders } from './contenders.mjs';
import { collectGarbage, compare, sequential } from './measure.mjs';

const DAY_MS = 86_400_000;

export async function benchBlocked(config, redis, log) {
  const client = await redis.client(false);
  const results = [];
  try {
    for (const s of [
      { scenario: '1 hot key over its limit (all denied)', keys: identities(1), limit: 10 },
      {
        scenario: `${config.redisKeys.toLocaleString('en-US')} keys, all admitted`,
        keys: identities(config.redisKeys),
        limit: 500_000,
      },
    ]) {
      log(`  blocked-key cache: ${s.scenario}`);
      const make = (blockCache) =>
        redisContenders(redis, client, s.limit, DAY_MS, ['fixedWindow'], {
          limiter: { blockCache },
        })
          .slice(0, 1)
          .map((c) => ({ ...c, name: blockCache ? 'cache on' : 'cache off' }));
      const denied = s.limit === 10;
      const samples = await compare(
        [...make(true), ...make(false)],
        config.repeats,
        async (decide) => {
          await sequential(decide, s.keys, Math.max(s.keys.length, 20));
          collectGarbage();
          const n = config.blockedDecisions;
          return { ...(await sequential(decide, s.keys, n)), iterations: n };
        },
        denied ? (d, n) => d === n : (d) => d === 0,
      );
      results.push({ scenario: s.scenario, samples });
    }
  } finally {
    client.disconnect();
  }
  return results;
}
