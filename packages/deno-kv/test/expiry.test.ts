// Nothing leaks: every key the store writes carries an expiry Deno KV acts on by itself. Deno
// KV deletes expired keys lazily (its SQLite backend sweeps about once a minute), so this test
// waits for the sweep: slow, but it is the only way to see the expiry Deno KV holds, which its
// API never returns.
import { createLimiter, fixedWindow } from '@floodgate/core';
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import { describe, expect, it } from 'vitest';
import { DenoKvStore } from '../src/index.js';
import { freshKv, keysUnder } from './support/kv.js';

describe('expiry in Deno KV itself', () => {
  it('every key written is deleted by Deno KV once its state has ended', {
    timeout: 150_000,
  }, async () => {
    const kv = await freshKv();
    const store = new DenoKvStore(kv, { expiryMarginMs: 0 });
    const limiter = createLimiter({
      store,
      policy: fixedWindow({ limit: 1, window: '1s', blockFor: '1s' }),
      onStoreError: 'throw',
    });
    await limiter.limit('a'); // the count
    await limiter.limit('a'); // denied: the block
    const leases = createConcurrencyLimiter({
      store,
      limit: 2,
      leaseMs: 1000,
      onStoreError: 'throw',
    });
    expect((await leases.acquire('a')).allowed).toBe(true);
    expect(await keysUnder(kv)).toHaveLength(3);
    const started = Date.now();
    while ((await keysUnder(kv)).length > 0 && Date.now() - started < 140_000) {
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(await keysUnder(kv)).toEqual([]);
  });
});
