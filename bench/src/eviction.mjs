// MemoryStore past maxKeys: CPU per decision while an attacker rotates identities, each one new.
// Filling up to maxKeys inserts without evicting; past it every decision inserts and evicts one
// key. Eviction is amortized O(1), so the two should cost about the same, with no sawtooth
// across the run. Reported, not asserted (the tests count the sweep's work instead).
import { createLimiter, fixedWindow } from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import { collectGarbage, median } from './measure.mjs';

const CHUNKS = 10;

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

/** Awaited decisions for fresh identities `first` … `first + n - 1`, in CHUNKS timed slices. */
async function slices(limiter, first, n) {
  const per = Math.floor(n / CHUNKS);
  const out = [];
  let denied = 0;
  for (let c = 0; c < CHUNKS; c++) {
    const start = cpuUs();
    for (let i = first + c * per, end = i + per; i < end; i++) {
      // A fresh string per request, as an app builds one from a header or an address.
      if (!(await limiter.limit(`ip-${i}`)).allowed) denied++;
    }
    out.push((cpuUs() - start) / per);
  }
  if (denied !== 0) throw new Error(`eviction bench: ${denied} denied, every identity is new`);
  return out;
}

/**
 * @returns {Promise<{ maxKeys: number, identities: number, within: number[], past: number[],
 *   pastChunks: number[][], ratio: number }>} CPU µs per decision, each run's median
 */
export async function benchEviction(config, log) {
  const maxKeys = config.evictionMaxKeys;
  const identities = maxKeys * 10;
  const within = [];
  const past = [];
  const pastChunks = [];
  for (let r = 0; r < config.repeats; r++) {
    log(`  eviction: run ${r + 1} of ${config.repeats}`);
    collectGarbage();
    const store = new MemoryStore({ maxKeys });
    const limiter = createLimiter({
      store,
      policy: fixedWindow({ limit: 10, window: '1h' }),
      prefix: 'rot',
    });
    within.push(median(await slices(limiter, 0, maxKeys)));
    const chunks = await slices(limiter, maxKeys, identities - maxKeys);
    if (store.size !== maxKeys)
      throw new Error(`eviction bench: size ${store.size}, not ${maxKeys}`);
    past.push(median(chunks));
    pastChunks.push(chunks);
  }
  return {
    maxKeys,
    identities,
    within,
    past,
    pastChunks,
    ratio: median(past) / median(within),
  };
}
