// Bad configuration is a FloodgateError with a stable code, before anything is read or written.
import { createLimiter, fixedWindow, tokenBucket } from '@floodgate/core';
import { describe, expect, it } from 'vitest';
import { DenoKvStore, type DenoKvStoreOptions } from '../src/index.js';
import { codeOf, freshKv, keysUnder } from './support/kv.js';

describe('DenoKvStore options', () => {
  it('needs a Deno KV connection', async () => {
    for (const kv of [null, undefined, {}, { getMany() {} }, 'kv']) {
      expect(await codeOf(() => new DenoKvStore(kv as never)), String(kv)).toBe('INVALID_OPTION');
    }
  });

  it('rejects unknown and malformed options', async () => {
    const kv = await freshKv();
    const bad: unknown[] = [
      { rooot: ['x'] },
      { root: [] },
      { root: 'floodgate' },
      { root: ['a', 1] },
      { root: ['x'.repeat(1100)] },
      { maxRetries: -1 },
      { maxRetries: 1.5 },
      { maxRetries: 1001 },
      { busyTimeoutMs: -1 },
      { busyTimeoutMs: Number.NaN },
      { expiryMarginMs: '60s' },
      { now: 5 },
      null,
    ];
    for (const options of bad) {
      const code = await codeOf(() => new DenoKvStore(kv, options as DenoKvStoreOptions));
      expect(code, JSON.stringify(options)).toBe('INVALID_OPTION');
    }
    expect(new DenoKvStore(kv, { root: ['app', 'limits'], maxRetries: 0 }).kind).toBe('deno-kv');
  });

  it('a clock that is not integer ms fails the call, and nothing is written', async () => {
    const kv = await freshKv();
    for (const t of [Number.NaN, -1, 1.5, Number.POSITIVE_INFINITY]) {
      const store = new DenoKvStore(kv, { now: () => t });
      const limiter = createLimiter({ store, policy: tokenBucket({ limit: 5, interval: '1s' }) });
      expect(await codeOf(() => limiter.limit('a')), String(t)).toBe('INVALID_OPTION');
    }
    expect(await keysUnder(kv)).toEqual([]);
  });

  it('a key too long for Deno KV is a configuration error, and nothing is written', async () => {
    const kv = await freshKv();
    const store = new DenoKvStore(kv);
    const limiter = createLimiter({
      store,
      policy: fixedWindow({ limit: 5, window: '1m' }),
      prefix: 'p'.repeat(2100),
      onStoreError: 'throw',
    });
    expect(await codeOf(() => limiter.limit('a'))).toBe('INVALID_OPTION');
    expect(await codeOf(() => limiter.reset('a'))).toBe('INVALID_OPTION');
    // Just under the limit works: 2048 bytes serialized with the root.
    const fits = createLimiter({
      store,
      policy: fixedWindow({ limit: 5, window: '1m' }),
      prefix: 'p'.repeat(1900),
      onStoreError: 'throw',
    });
    expect((await fits.limit('a')).allowed).toBe(true);
    expect(await keysUnder(kv)).toHaveLength(1);
  });

  it('a decision checks at most 10 keys: more policies are refused before any read', async () => {
    const kv = await freshKv();
    const store = new DenoKvStore(kv);
    const policies = (n: number) =>
      Array.from({ length: n }, (_, i) => fixedWindow({ limit: 5, window: (i + 1) * 60_000 }));
    const eleven = createLimiter({ store, policy: policies(11), onStoreError: 'throw' });
    expect(await codeOf(() => eleven.limit('a'))).toBe('INVALID_OPTION');
    expect(await keysUnder(kv)).toEqual([]);
    const ten = createLimiter({ store, policy: policies(10), onStoreError: 'throw' });
    expect((await ten.limit('a')).remaining).toBe(4);
    expect(await keysUnder(kv)).toHaveLength(10);
  });
});
