// The blocked-key cache and the store's change feed (`Store.watch`), on an in-process store
// with a feed driven by the test: what each change does to a cached denial, the staleness bound
// while the feed is not known healthy, and the hook that drops an entry from outside limiter.ts.
// The same behaviour over real Redis processes: the testkit's redisInvalidationTests.
import { describe, expect, it } from 'vitest';
import { createLimiter, fixedWindow, isFloodgateError } from '../src/index.js';
import { invalidateCached } from '../src/internal.js';
import type { StoreChange } from '../src/store.js';
import { MapStore } from './map-store.js';

/** A remote store on a clock the test moves, whose change feed the test drives. */
class WatchedStore extends MapStore {
  t = 1_700_000_000_000;
  readonly listeners = new Set<(c: StoreChange) => void>();
  constructor() {
    super(() => 0, true);
  }
  override readonly now = (): number => this.t;
  watch(listener: (c: StoreChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  tell(change: StoreChange): void {
    for (const l of this.listeners) l(change);
  }
  /** What another process's reset does: the keys go, the feed says so (or not). */
  async resetElsewhere(prefix: string, identity: string, announce: boolean): Promise<void> {
    for (const k of [...this.states.keys()]) {
      if (k.startsWith(`${prefix}:{${identity}}:`)) this.states.delete(k);
    }
    if (announce) this.tell({ type: 'identity', prefix, identity });
  }
}

const policy = fixedWindow({ limit: 1, window: '1h', blockFor: '1d' });

async function blocked(store: WatchedStore, maxStaleMs?: number, prefix = 'p') {
  const l = createLimiter({
    store,
    policy,
    prefix,
    breaker: false,
    timeoutMs: false,
    ...(maxStaleMs === undefined ? {} : { blockCache: { maxStaleMs } }),
  });
  expect((await l.limit('u')).allowed).toBe(true);
  expect((await l.limit('u')).allowed).toBe(false);
  expect((await l.limit('u')).reason).toBe('blocked-cache');
  return l;
}

describe('the blocked-key cache and the change feed', () => {
  it('a change announced for the identity drops its entry: the next decision asks the store', async () => {
    const store = new WatchedStore();
    const l = await blocked(store);
    store.tell({ type: 'alive' });
    store.t += 3_600_000; // an hour on: the feed vouches, so a day's block is still served
    store.tell({ type: 'alive' });
    expect((await l.limit('u')).reason).toBe('blocked-cache');
    // Another limiter's prefix, or another identity: not this entry.
    store.tell({ type: 'identity', prefix: 'other', identity: 'u' });
    store.tell({ type: 'identity', prefix: 'p', identity: 'v' });
    expect((await l.limit('u')).reason).toBe('blocked-cache');
    await store.resetElsewhere('p', 'u', true);
    const calls = store.calls;
    const next = await l.limit('u');
    expect([next.allowed, next.reason, store.calls]).toEqual([true, undefined, calls + 1]);
  });

  it('without a vouching feed a denial is served at most maxStaleMs: a missed reset is seen then', async () => {
    const store = new WatchedStore();
    const l = await blocked(store, 100);
    await store.resetElsewhere('p', 'u', false); // the announcement never arrives
    store.t += 99;
    expect((await l.limit('u')).reason).toBe('blocked-cache'); // stale, within the bound
    store.t += 1;
    const next = await l.limit('u');
    expect([next.allowed, next.reason]).toEqual([true, undefined]);
  });

  it("'down' ends the vouching at once; 'missed' drops every entry; the default bound is 1 s", async () => {
    const store = new WatchedStore();
    const l = await blocked(store);
    store.tell({ type: 'alive' });
    store.t += 1500;
    store.tell({ type: 'alive' });
    expect((await l.limit('u')).reason).toBe('blocked-cache');
    store.tell({ type: 'down' });
    // 1.5 s old, no vouching since the feed went down: the store is asked (and still blocks).
    const calls = store.calls;
    const asked = await l.limit('u');
    expect([asked.allowed, asked.reason, store.calls]).toEqual([false, undefined, calls + 1]);
    expect((await l.limit('u')).reason).toBe('blocked-cache'); // the fresh denial is served
    store.tell({ type: 'missed' });
    store.tell({ type: 'alive' });
    expect((await l.limit('u')).reason).toBe(undefined);
  });

  it('a change heard while a denial is in flight keeps that denial out of the cache', async () => {
    const store = new WatchedStore();
    const l = createLimiter({ store, policy, prefix: 'p', breaker: false, timeoutMs: false });
    await l.limit('u');
    const inFlight = l.limit('u');
    store.tell({ type: 'identity', prefix: 'p', identity: 'u' });
    expect((await inFlight).allowed).toBe(false);
    expect((await l.limit('u')).reason).toBe(undefined);
  });

  it('a store without a feed: the bound alone (a custom remote store)', async () => {
    const store = new MapStore(() => 0, true);
    let t = 0;
    const clocked = Object.assign(store, { now: () => t });
    const l = createLimiter({ store: clocked, policy, breaker: false, timeoutMs: false });
    await l.limit('u');
    await l.limit('u');
    t = 999;
    expect((await l.limit('u')).reason).toBe('blocked-cache');
    await store.reset([...store.states.keys()]);
    t = 1000;
    expect((await l.limit('u')).allowed).toBe(true);
  });

  it('invalidateCached: the hook an override (or any helper) calls drops the entry locally', async () => {
    const store = new WatchedStore();
    const l = await blocked(store);
    store.tell({ type: 'alive' });
    expect(invalidateCached(l, 'u')).toBe(true);
    const calls = store.calls;
    const next = await l.limit('u');
    expect([next.reason, store.calls]).toEqual([undefined, calls + 1]);
    const uncached = createLimiter({ store, policy, blockCache: false });
    expect(invalidateCached(uncached, 'u')).toBe(false);
    expect(() => invalidateCached(l, '')).toThrow();
  });

  it('blockCache options: max and maxStaleMs checked before any store is touched', () => {
    const store = new WatchedStore();
    for (const blockCache of [{ maxStaleMs: -1 }, { maxStaleMs: 1.5 }, { max: 1, ttl: 5 }, {}]) {
      let error: unknown;
      try {
        createLimiter({ store, policy, blockCache: blockCache as { max: number } });
      } catch (e) {
        error = e;
      }
      expect(isFloodgateError(error) && error.code, JSON.stringify(blockCache)).toBe(
        'INVALID_OPTION',
      );
    }
    for (const blockCache of [{ maxStaleMs: 0 }, { max: 5 }, { max: 5, maxStaleMs: 10_000 }]) {
      expect(() => createLimiter({ store, policy, blockCache })).not.toThrow();
    }
    expect(store.listeners.size).toBe(3);
  });
});
