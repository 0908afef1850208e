// The concurrency limiter's outage story, the rate limiter's (issue 30, item 4): timeoutMs with a
// deadline the store hears of, the breaker, onStoreError with the store's in-process fallback by
// default, onError, and leases that say why (`reason`). Over a LeaseStore with fault switches;
// the Redis side (a stopped and a stalled redis-server) is in the testkit's Redis suite.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createConcurrencyLimiter } from '../src/concurrency.js';
import type { FloodgateError } from '../src/errors.js';
import { LeaseMapStore, RemoteLeaseStore } from './lease-map-store.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('createConcurrencyLimiter when the store fails', () => {
  it("falls back to the store's in-process fallback by default: the limit holds there, and a release goes where the lease was granted", async () => {
    const store = new RemoteLeaseStore();
    const errors: FloodgateError[] = [];
    const limiter = createConcurrencyLimiter({
      store,
      limit: 2,
      leaseMs: '1m',
      onError: (e) => errors.push(e),
    });
    const before = await limiter.acquire('u');
    expect([before.allowed, before.reason]).toEqual([true, undefined]);
    store.down = true;
    const a = await limiter.acquire('u');
    const b = await limiter.acquire('u');
    const c = await limiter.acquire('u');
    expect([a, b, c].map((l) => [l.allowed, l.reason])).toEqual([
      [true, 'store-unavailable'],
      [true, 'store-unavailable'],
      [false, 'store-unavailable'],
    ]);
    expect(c.retryAfterMs).toBeGreaterThan(0);
    expect(errors.map((e) => e.code)).toEqual([
      'STORE_UNAVAILABLE',
      'STORE_UNAVAILABLE',
      'STORE_UNAVAILABLE',
    ]);
    // One fallback for the limiter's life, holding the two fallback leases.
    expect(store.fallbacks).toHaveLength(1);
    const fallback = store.fallbacks[0]!;
    expect(fallback.slots(limiter.key('u'))).toBe(2);
    const releasesBefore = store.releases;
    await a.release();
    expect(fallback.slots(limiter.key('u'))).toBe(1);
    expect(store.releases).toBe(releasesBefore);
    // The lease granted before the outage is still the primary's: its release goes there.
    store.down = false;
    await before.release();
    expect(store.slots(limiter.key('u'))).toBe(0);
    expect(fallback.slots(limiter.key('u'))).toBe(1);
  });

  it('timeoutMs: a stalled store is answered by the fallback at the deadline, which the store was told', async () => {
    const store = new RemoteLeaseStore();
    const limiter = createConcurrencyLimiter({ store, limit: 1, leaseMs: '1m', timeoutMs: 30 });
    store.stall();
    const t0 = performance.now();
    const lease = await limiter.acquire('u');
    const t1 = performance.now();
    expect([lease.allowed, lease.reason]).toEqual([true, 'store-timeout']);
    expect(t1 - t0).toBeGreaterThanOrEqual(29);
    store.heal();
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The deadline the store was told: timeoutMs after the call began (however late the limiter
    // got to it on a loaded machine), and the fallback answered no sooner than it.
    const sent = store.requests.at(-1)!;
    expect(sent.deadline).toBeGreaterThanOrEqual(t0 + 30);
    expect(sent.deadline).toBeLessThanOrEqual(t1);
    // This store ignores the deadline and granted late: the limiter freed that grant.
    expect(store.slots(limiter.key('u'))).toBe(0);
    expect(store.fallbacks[0]!.slots(limiter.key('u'))).toBe(1);
  });

  it('the breaker opens after 5 failures: the store is no longer called, the fallback decides', async () => {
    const store = new RemoteLeaseStore();
    const states: string[] = [];
    const limiter = createConcurrencyLimiter({
      store,
      limit: 100,
      leaseMs: '1m',
      breaker: { cooldownMs: 60_000, onStateChange: (s) => states.push(s) },
    });
    store.down = true;
    for (let i = 0; i < 5; i++) await limiter.acquire('u');
    expect(states).toEqual(['open']);
    const calls = store.calls;
    const lease = await limiter.acquire('u');
    expect([lease.allowed, lease.reason]).toEqual([true, 'store-unavailable']);
    expect(store.calls).toBe(calls);
  });

  it("'allow', 'deny' and 'throw' answer as createLimiter's do; a store without a fallback throws", async () => {
    const store = new LeaseMapStore(true);
    store.down = true;
    const allow = createConcurrencyLimiter({
      store,
      limit: 1,
      leaseMs: 1000,
      onStoreError: 'allow',
    });
    const granted = await allow.acquire('u');
    expect([granted.allowed, granted.remaining, granted.reason]).toEqual([
      true,
      0,
      'store-unavailable',
    ]);
    expect(await granted.extend()).toBe(true);
    await granted.release();
    expect(await granted.extend()).toBe(false);
    const deny = createConcurrencyLimiter({ store, limit: 1, leaseMs: 1000, onStoreError: 'deny' });
    const denied = await deny.acquire('u');
    expect(denied).toMatchObject({
      allowed: false,
      remaining: 0,
      retryAfterMs: 1000,
      reason: 'store-unavailable',
    });
    for (const onStoreError of ['throw', undefined] as const) {
      const limiter = createConcurrencyLimiter({ store, limit: 1, leaseMs: 1000, onStoreError });
      await expect(limiter.acquire('u')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    }
    expect(store.held.size).toBe(0);
  });

  it('a given fallback store holds the leases; bad failure options are refused before any store call', async () => {
    const store = new LeaseMapStore(true);
    const fallback = new LeaseMapStore();
    store.down = true;
    const limiter = createConcurrencyLimiter({
      store,
      limit: 1,
      leaseMs: 1000,
      onStoreError: fallback,
    });
    const lease = await limiter.acquire('u');
    expect([lease.allowed, fallback.slots(limiter.key('u'))]).toEqual([true, 1]);
    expect((await limiter.acquire('u')).allowed).toBe(false);
    const calls = store.calls;
    for (const bad of [
      { onStoreError: 'alow' },
      { onStoreError: {} },
      { onError: 'log' },
      { onDecision: 42 },
      { telemetry: {} },
      { breaker: 'on' },
      { breaker: { failures: 0 } },
    ]) {
      expect(() =>
        createConcurrencyLimiter({ store, limit: 1, leaseMs: 1000, ...(bad as object) }),
      ).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    }
    expect(store.calls).toBe(calls);
  });

  it('an onError that throws or rejects changes nothing and crashes nothing', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const store = new RemoteLeaseStore();
    store.down = true;
    for (const onError of [
      () => {
        throw new Error('alerting is down');
      },
      () => Promise.reject(new Error('alerting is down')),
    ]) {
      const limiter = createConcurrencyLimiter({ store, limit: 1, leaseMs: 1000, onError });
      const lease = await limiter.acquire('u');
      expect([lease.allowed, lease.reason]).toEqual([true, 'store-unavailable']);
      await new Promise((resolve) => setTimeout(resolve, 0));
    }
    expect(logged).toHaveBeenCalledTimes(2);
  });
});
