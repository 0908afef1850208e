import { afterEach, describe, expect, it, vi } from 'vitest';
import { FloodgateError, isFloodgateError } from '../src/errors.js';
import { fixedWindow, tokenBucket } from '../src/index.js';
import { createLimiter } from '../src/limiter.js';
import type { Store } from '../src/store.js';
import { MapStore } from './map-store.js';

const failing = (
  error: unknown = new Error('ECONNREFUSED'),
  extra: Partial<Store> = {},
): Store => ({
  evaluate: () => Promise.reject(error),
  reset: () => Promise.reject(error),
  ...extra,
});

async function rejection(p: Promise<unknown>): Promise<FloodgateError> {
  try {
    await p;
  } catch (e) {
    expect(isFloodgateError(e)).toBe(true);
    return e as FloodgateError;
  }
  throw new Error('expected a rejection');
}

afterEach(() => {
  vi.useRealTimers();
});

describe('createLimiter', () => {
  it('limits, peeks and resets through the store, one call per decision', async () => {
    const store = new MapStore(() => 1_000_000);
    const l = createLimiter({
      store,
      policy: fixedWindow({ limit: 2, window: '1s' }),
      prefix: 'api',
    });
    expect((await l.limit('u')).remaining).toBe(1);
    expect((await l.peek('u')).remaining).toBe(1);
    expect((await l.limit('u')).allowed).toBe(true);
    expect((await l.limit('u')).allowed).toBe(false);
    expect(store.calls).toBe(4);
    expect([...store.states.keys()]).toEqual([`api:{u}:${l.policies[0]!.id}`]);
    await l.reset('u');
    expect(store.states.size).toBe(0);
    expect(l.policies.map((p) => p.id)).toEqual([fixedWindow({ limit: 2, window: 1000 }).id]);
    expect(Object.isFrozen(l.policies)).toBe(true);
  });

  it("the default prefix is 'floodgate'", async () => {
    const store = new MapStore();
    await createLimiter({ store, policy: fixedWindow({ limit: 2, window: '1s' }) }).limit('u');
    const id = fixedWindow({ limit: 2, window: '1s' }).id;
    expect([...store.states.keys()]).toEqual([`floodgate:{u}:${id}`]);
  });

  it('bad input never reaches the store', async () => {
    const store = new MapStore();
    const l = createLimiter({ store, policy: tokenBucket({ limit: 3, interval: '1s' }) });
    expect((await rejection(l.limit('', { cost: 1 }))).code).toBe('INVALID_KEY');
    expect((await rejection(l.limit('u', { cost: 0 }))).code).toBe('INVALID_COST');
    expect((await rejection(l.limit('u', { cost: 4 }))).code).toBe('COST_EXCEEDS_CAPACITY');
    expect((await rejection(l.peek(1 as never))).code).toBe('INVALID_KEY');
    for (const opts of [5, 'x', null, { costs: 2 }, { cost: 1, priority: 1 }]) {
      expect((await rejection(l.limit('u', opts as never))).code).toBe('INVALID_OPTION');
    }
    expect(store.calls).toBe(0);
    expect((await l.limit('u', {})).allowed).toBe(true);
    expect((await l.limit('u', { cost: undefined })).remaining).toBe(1);
    expect((await rejection(l.reset(undefined as never))).code).toBe('INVALID_KEY');
    expect(store.calls).toBe(2);
  });

  it('options are judged by their own keys, as Object.keys sees them', async () => {
    const l = createLimiter({
      store: new MapStore(),
      policy: tokenBucket({ limit: 3, interval: '1s' }),
    });
    const inherited = Object.assign(Object.create({ priority: 1 }), { cost: 2 });
    expect((await l.limit('u', inherited)).remaining).toBe(1);
    const hidden = Object.defineProperty({ cost: 1 }, 'priority', { value: 1, enumerable: false });
    expect((await l.limit('u', hidden)).remaining).toBe(0);
  });
});

describe('options', () => {
  it('unknown options and bad values of known ones: INVALID_OPTION at construction', () => {
    const store = new MapStore();
    const policy = fixedWindow({ limit: 1, window: '1s' });
    const bad: Record<string, unknown>[] = [
      { onStoreError: 'alow' },
      { onStoreError: {} },
      { onStoreError: null },
      { blockCache: 'yes' },
      { blockCache: { max: 0 } },
      { blockCache: { max: 1.5 } },
      { blockCache: {} },
      { onError: 'log' },
      { timeoutMs: 0 },
      { prefix: '{a}' },
      { clock: 'client' },
    ];
    for (const o of bad) {
      let error: unknown;
      try {
        createLimiter({ store, policy, ...o });
      } catch (e) {
        error = e;
      }
      expect(isFloodgateError(error) && error.code, JSON.stringify(o)).toBe('INVALID_OPTION');
    }
    const good: Record<string, unknown>[] = [
      { onStoreError: 'throw' },
      { onStoreError: 'allow' },
      { onStoreError: 'deny' },
      { onStoreError: new MapStore() },
      { blockCache: false },
      { blockCache: { max: 1 } },
      { onError: () => {} },
    ];
    for (const o of good) expect(() => createLimiter({ store, policy, ...o })).not.toThrow();
  });
});

describe('onStoreError', () => {
  it('default without a fallback: throws STORE_UNAVAILABLE with the cause', async () => {
    const cause = new Error('ECONNREFUSED');
    const l = createLimiter({
      store: failing(cause),
      policy: fixedWindow({ limit: 2, window: '1s' }),
    });
    const e = await rejection(l.limit('u'));
    expect([e.code, e.cause]).toEqual(['STORE_UNAVAILABLE', cause]);
  });

  it("'allow' and 'deny' decide, say why, and report the error", async () => {
    const errors: FloodgateError[] = [];
    const policy = fixedWindow({ limit: 2, window: '1s' });
    const allow = createLimiter({
      store: failing(),
      policy,
      onStoreError: 'allow',
      onError: (e) => errors.push(e),
    });
    const a = await allow.limit('u');
    expect([a.allowed, a.reason, a.retryAfterMs]).toEqual([true, 'store-unavailable', 0]);
    const deny = createLimiter({
      store: failing(),
      policy,
      onStoreError: 'deny',
      onError: (e) => errors.push(e),
    });
    const d = await deny.limit('u');
    expect([d.allowed, d.reason]).toEqual([false, 'store-unavailable']);
    expect(d.retryAfterMs).toBeGreaterThan(0);
    expect(errors.map((e) => e.code)).toEqual(['STORE_UNAVAILABLE', 'STORE_UNAVAILABLE']);
  });

  it('a fallback store decides instead, given explicitly or by the store', async () => {
    const policy = fixedWindow({ limit: 1, window: '1s' });
    const backup = new MapStore(() => 5_000);
    const explicit = createLimiter({ store: failing(), policy, onStoreError: backup });
    expect(await explicit.limit('u')).toMatchObject({ allowed: true, reason: 'store-unavailable' });
    expect(await explicit.limit('u')).toMatchObject({
      allowed: false,
      reason: 'store-unavailable',
    });
    const own = new MapStore(() => 5_000);
    const implicit = createLimiter({ store: failing(undefined, { fallback: () => own }), policy });
    expect(await implicit.limit('u')).toMatchObject({ allowed: true, reason: 'store-unavailable' });
    expect(own.calls).toBe(1);
  });

  it("a store's own STORE_TIMEOUT is kept as such", async () => {
    const policy = fixedWindow({ limit: 1, window: '1s' });
    const l = createLimiter({
      store: failing(new FloodgateError('STORE_TIMEOUT', 'slow')),
      policy,
      onStoreError: 'allow',
    });
    expect((await l.limit('u')).reason).toBe('store-timeout');
  });

  it('timeoutMs gives up on a store that does not answer', async () => {
    vi.useFakeTimers();
    const hanging: Store = { evaluate: () => new Promise(() => {}), reset: async () => {} };
    const policy = fixedWindow({ limit: 1, window: '1s' });
    const allow = createLimiter({ store: hanging, policy, timeoutMs: 50, onStoreError: 'allow' });
    const pending = allow.limit('u');
    await vi.advanceTimersByTimeAsync(50);
    expect((await pending).reason).toBe('store-timeout');
    const strict = createLimiter({ store: hanging, policy, timeoutMs: 50 });
    const failed = rejection(strict.limit('u'));
    await vi.advanceTimersByTimeAsync(50);
    expect((await failed).code).toBe('STORE_TIMEOUT');
    // A store that answers in time leaves no timer behind.
    const quick = createLimiter({ store: new MapStore(() => 0), policy, timeoutMs: 50 });
    expect((await quick.limit('u')).allowed).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('blocked-key cache', () => {
  it('remote stores: a denied identity is answered in-process until retryAfterMs has passed', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_700_000_000_000);
    const store = new MapStore(Date.now, true);
    const l = createLimiter({ store, policy: fixedWindow({ limit: 1, window: '1s' }) });
    await l.limit('u');
    const denied = await l.limit('u');
    expect(denied.allowed).toBe(false);
    expect(store.calls).toBe(2);
    vi.setSystemTime(Date.now() + 300);
    const cached = await l.limit('u');
    expect([cached.allowed, cached.reason, cached.retryAfterMs]).toEqual([
      false,
      'blocked-cache',
      denied.retryAfterMs - 300,
    ]);
    // Per-policy waits age with it: they never claim more than the wait that is left.
    expect(cached.policies[0]!.retryAfterMs).toBe(denied.policies[0]!.retryAfterMs - 300);
    expect(cached.resetAfterMs).toBe(denied.resetAfterMs - 300);
    expect(store.calls).toBe(2);
    // peek always asks the store.
    await l.peek('u');
    expect(store.calls).toBe(3);
    vi.setSystemTime(Date.now() + cached.retryAfterMs);
    expect((await l.limit('u')).allowed).toBe(true);
    expect(store.calls).toBe(4);
  });

  it('a smaller request than the one denied still asks the store', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_700_000_000_000);
    const store = new MapStore(Date.now, true);
    const l = createLimiter({ store, policy: tokenBucket({ limit: 3, interval: '1s' }) });
    await l.limit('u', { cost: 2 });
    expect((await l.limit('u', { cost: 2 })).allowed).toBe(false);
    const small = await l.limit('u', { cost: 1 });
    expect([small.allowed, small.reason]).toEqual([true, undefined]);
    // A larger one too: it is denied as well, but its tight wait is its own.
    const calls = store.calls;
    expect((await l.limit('u', { cost: 1 })).reason).toBe(undefined);
    const big = await l.limit('u', { cost: 3 });
    expect([big.allowed, big.reason]).toEqual([false, undefined]);
    expect(store.calls).toBe(calls + 2);
  });

  it('reset forgets the block; blockCache: false turns it off; local stores have none by default', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_700_000_000_000);
    const policy = fixedWindow({ limit: 1, window: '1m' });
    const remote = new MapStore(Date.now, true);
    const l = createLimiter({ store: remote, policy });
    await l.limit('u');
    await l.limit('u');
    await l.reset('u');
    expect((await l.limit('u')).allowed).toBe(true);

    for (const [store, blockCache] of [
      [new MapStore(Date.now, true), false],
      [new MapStore(Date.now, false), undefined],
    ] as const) {
      const m = createLimiter({
        store,
        policy,
        ...(blockCache === undefined ? {} : { blockCache }),
      });
      await m.limit('u');
      await m.limit('u');
      const d = await m.limit('u');
      expect([d.allowed, d.reason, store.calls]).toEqual([false, undefined, 3]);
    }
  });

  it('is bounded by max', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_700_000_000_000);
    const store = new MapStore(Date.now, true);
    const l = createLimiter({
      store,
      policy: fixedWindow({ limit: 1, window: '1m' }),
      blockCache: { max: 1 },
    });
    for (const id of ['a', 'b']) {
      await l.limit(id);
      await l.limit(id);
    }
    const calls = store.calls;
    expect((await l.limit('b')).reason).toBe('blocked-cache');
    expect((await l.limit('a')).reason).toBe(undefined);
    expect(store.calls).toBe(calls + 1);
  });
});
