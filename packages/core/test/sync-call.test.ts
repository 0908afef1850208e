// On the in-process path the limiter refills one call object per decision instead of allocating
// one. These pin down what that must not change: a store that calls back into the limiter, a
// fallback store that keeps its call, and `keys` after a refill.
import { describe, expect, it } from 'vitest';
import { fixedWindow } from '../src/index.js';
import { createLimiter } from '../src/limiter.js';
import type { PolicyResult, Store, StoreCall } from '../src/store.js';
import { MapStore } from './map-store.js';

/** A MapStore that also answers synchronously, with a hook run inside each call. */
class SyncStore extends MapStore {
  inside: ((call: StoreCall) => void) | undefined;
  seen: string[] = [];
  evaluateSync(call: StoreCall): readonly PolicyResult[] {
    this.inside?.(call);
    this.seen.push(call.keys.join(','));
    return this.decide(call);
  }
}

const policy = fixedWindow({ limit: 10, window: 60_000 });

describe('the in-process call object', () => {
  it('a store that calls back into the limiter leaves the outer call as it was', async () => {
    const store = new SyncStore(() => 1_000);
    const limiter = createLimiter({ store, policy, prefix: 'p' });
    let inner: Promise<unknown> | undefined;
    store.inside = (call) => {
      store.inside = undefined;
      inner = limiter.limit('inner');
      expect(call.identity).toBe('outer');
      expect(call.keys.join()).toContain('{outer}');
    };
    const d = await limiter.limit('outer');
    await inner;
    expect(store.seen).toEqual([
      expect.stringContaining('{inner}'),
      expect.stringContaining('{outer}'),
    ]);
    expect(d.remaining).toBe(9);
  });

  it('keys follow the identity of each decision', async () => {
    const store = new SyncStore(() => 1_000);
    const limiter = createLimiter({ store, policy, prefix: 'p' });
    await limiter.limit('a');
    await limiter.peek('b');
    await limiter.limit('c', { cost: 2 });
    expect(store.seen.map((k) => /\{(\w)\}/.exec(k)?.[1])).toEqual(['a', 'b', 'c']);
  });

  it('a fallback store keeps a call of its own, untouched by later decisions', async () => {
    const kept: StoreCall[] = [];
    const fallback = new MapStore(() => 1_000);
    const keep: Store = {
      evaluate: (call) => {
        kept.push(call);
        return fallback.evaluate(call);
      },
      reset: (keys) => fallback.reset(keys),
    };
    const store = new SyncStore(() => 1_000);
    const limiter = createLimiter({ store, policy, onStoreError: keep });
    store.inside = (call) => {
      if (call.identity === 'down') throw new Error('store failed');
    };
    const d = await limiter.limit('down', { cost: 3 });
    expect(d.reason).toBe('store-unavailable');
    await limiter.limit('up');
    expect(kept).toHaveLength(1);
    expect([kept[0]!.identity, kept[0]!.cost, kept[0]!.mode]).toEqual(['down', 3, 'limit']);
    expect('deadline' in kept[0]!).toBe(false);
  });
});
