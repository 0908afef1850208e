// GLIDE contenders: Floodgate's GlideStore and rate-limiter-flexible's RateLimiterValkeyGlide on
// one shared GLIDE client. RateLimiterValkeyGlide has one algorithm, a fixed window (INCRBY with an
// expiry, as a Valkey Function), so fixedWindow is the like-for-like row; tokenBucket is what
// Floodgate recommends, shown against the same peer as in the Redis section.
import { createLimiter } from '@floodgate/core';
import { GlideStore } from '@floodgate/valkey-glide';
import { RateLimiterValkeyGlide } from 'rate-limiter-flexible';
import { policyOf } from './contenders.mjs';

export const PEER = 'rate-limiter-flexible RateLimiterValkeyGlide';

/** Each { name, setup } starts from an empty keyspace (FLUSHALL keeps scripts and functions). */
export function glideContenders(client, limit, ms) {
  const flush = () => client.customCommand(['FLUSHALL', 'SYNC']);
  const floodgate = (name, policy, storeOptions) => ({
    name,
    setup: async () => {
      await flush();
      const limiter = createLimiter({
        store: new GlideStore(client, storeOptions),
        policy: policyOf(policy, limit, ms),
      });
      return { decide: (key) => limiter.limit(key) };
    },
  });
  return [
    // GlideStore batches the decisions of one tick by default; RateLimiterValkeyGlide does not,
    // so the batch-off row is the one-FCALL-against-one-EVALSHA comparison.
    floodgate('GlideStore fixedWindow', 'fixedWindow'),
    floodgate('GlideStore fixedWindow, batch off', 'fixedWindow', { batch: false }),
    floodgate('GlideStore tokenBucket', 'tokenBucket'),
    {
      name: PEER,
      setup: async () => {
        await flush();
        const rl = new RateLimiterValkeyGlide({
          storeClient: client,
          points: limit,
          duration: ms / 1000,
        });
        return { decide: (key) => rl.consume(key) };
      },
    },
  ];
}
