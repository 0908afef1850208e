// The cost of `onDecision` on the in-process path: one limiter without it (the limiter returns
// its methods unwrapped), one with a hook that only counts. Same store, policy and keys.
import { createLimiter, tokenBucket } from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import { identities } from './config.mjs';
import { collectGarbage, compare, sequential } from './measure.mjs';

const NEVER = 500_000;

/** @returns {Promise<{ scenario: string, samples: Map<string, number[]> }[]>} */
export async function benchHooks(config, log) {
  log('  in-process: onDecision unset / set');
  const keys = identities(1);
  const policy = tokenBucket({ limit: NEVER, interval: '1d' });
  let events = 0;
  const contenders = [
    { name: 'tokenBucket, onDecision unset', options: {} },
    { name: 'tokenBucket, onDecision set', options: { onDecision: () => void events++ } },
  ].map(({ name, options }) => ({
    name,
    setup: async () => {
      const limiter = createLimiter({ store: new MemoryStore(), policy, ...options });
      return { decide: (key) => limiter.limit(key) };
    },
  }));
  const warmup = Math.max(config.warmup, 10);
  const samples = await compare(
    contenders,
    config.repeats,
    async (decide) => {
      await sequential(decide, keys, warmup);
      collectGarbage();
      const { ns, denied } = await sequential(decide, keys, config.iterations);
      return { ns, denied, iterations: config.iterations };
    },
    (denied) => denied === 0,
  );
  if (events === 0) throw new Error('onDecision was never called');
  return [{ scenario: '1 key', samples }];
}
