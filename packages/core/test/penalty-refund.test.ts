// blockFor and refund at the limiter: option checks, the blocked-key cache, the reference.
import { describe, expect, it } from 'vitest';
import {
  createLimiter,
  fixedWindow,
  isFloodgateError,
  leakyBucket,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import { evaluateAll } from '../src/store.js';
import { MapStore } from './map-store.js';

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isFloodgateError(error) ? error.code : 'not a FloodgateError';
  }
  return undefined;
}

describe('blockFor', () => {
  it('is a duration on every factory; absent, the policy has no blockForMs', () => {
    expect(fixedWindow({ limit: 1, window: '1s', blockFor: '1m' }).blockForMs).toBe(60_000);
    expect(slidingWindow({ limit: 1, window: '1s', blockFor: 5 }).blockForMs).toBe(5);
    expect(slidingWindowLog({ limit: 1, window: '1s', blockFor: '2h' }).blockForMs).toBe(7_200_000);
    expect(tokenBucket({ limit: 1, interval: '1s', blockFor: '1s' }).blockForMs).toBe(1000);
    expect(leakyBucket({ limit: 1, interval: '1s', queue: 1, blockFor: '1s' }).blockForMs).toBe(
      1000,
    );
    expect('blockForMs' in fixedWindow({ limit: 1, window: '1s' })).toBe(false);
  });

  it('refuses what is not a positive duration', () => {
    for (const blockFor of [0, -5, 1.5, 'soon', null, Number.NaN]) {
      expect(code(() => fixedWindow({ limit: 1, window: '1s', blockFor: blockFor as never }))).toBe(
        'INVALID_POLICY',
      );
    }
  });

  it('the reference: blocked calls charge nothing, peek reports the block and sets none', () => {
    const policies = [fixedWindow({ limit: 1, window: 1000, blockFor: 5000 })];
    const keys = ['p', 'p:blk'];
    const limit = { keys, policies, cost: 1, mode: 'limit' as const };
    const first = evaluateAll(limit, [undefined, undefined], 0);
    expect(first.writes).toEqual([{ state: [0, 1], ttlMs: 1000 }, undefined]);
    const denied = evaluateAll(limit, [[0, 1], undefined], 10);
    expect(denied.results[0]).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 5000 });
    expect(denied.writes).toEqual([undefined, { state: [5010], ttlMs: 5000 }]);
    const peek = evaluateAll({ ...limit, mode: 'peek' }, [undefined, undefined], 10);
    expect(peek.writes).toEqual([undefined, undefined]);
    const blocked = evaluateAll(limit, [undefined, [5010]], 2000);
    expect(blocked.results[0]).toMatchObject({ allowed: false, retryAfterMs: 3010 });
    expect(blocked.writes).toEqual([undefined, undefined]);
  });
});

describe('refund', () => {
  it('drops the blocked-key cache entry: the next decision asks the store', async () => {
    const now = 0;
    const store = new MapStore(() => now, true);
    const limiter = createLimiter({
      store,
      policy: fixedWindow({ limit: 1, window: '1h' }),
      blockCache: true,
      breaker: false,
      timeoutMs: false,
    });
    expect((await limiter.limit('k')).allowed).toBe(true);
    expect((await limiter.limit('k')).allowed).toBe(false);
    const cached = await limiter.limit('k');
    expect(cached.reason).toBe('blocked-cache');
    await limiter.refund('k');
    const calls = store.calls;
    const after = await limiter.limit('k');
    expect(after.allowed).toBe(true);
    expect(store.calls).toBe(calls + 1);
  });

  it('is one store call with mode refund, and never lifts a policy past its limit', async () => {
    const store = new MapStore(() => 0);
    const limiter = createLimiter({ store, policy: tokenBucket({ limit: 5, interval: '1h' }) });
    await limiter.limit('k', { cost: 2 });
    const calls = store.calls;
    await limiter.refund('k', { cost: 5 });
    expect(store.calls).toBe(calls + 1);
    expect((await limiter.peek('k')).remaining).toBe(5);
    // Full again: the bucket's key is gone.
    expect(store.states.size).toBe(0);
  });
});
