// The concurrency limiter's outage story on the store under test (registered by
// registerConcurrency): as a rate limiter does, an acquire the store cannot answer goes to
// `onStoreError`, by default the store's own `fallback()`; the store under test then holds the
// leases in its place, the limit holds there, and each lease is released where it was granted.
// What a real Redis outage does (a stalled network, a paused server) is in the Redis suite.
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import { isLeaseStore, type LeaseGrant, type LeaseStore, type Store } from '@floodgate/core/store';
import { expectCode, type Harness, type Run } from './harness.js';

/** A remote store that is down: every call rejects, and none reaches the store under test. */
function downStore(fallback?: () => Store): LeaseStore & { calls: number } {
  const down = {
    calls: 0,
    remote: true,
    ...(fallback === undefined ? {} : { fallback }),
    acquireLease(): Promise<LeaseGrant> {
      down.calls++;
      return Promise.reject(new Error('ECONNREFUSED'));
    },
    releaseLease(): Promise<boolean> {
      down.calls++;
      return Promise.reject(new Error('ECONNREFUSED'));
    },
    extendLease(): Promise<boolean> {
      down.calls++;
      return Promise.reject(new Error('ECONNREFUSED'));
    },
  };
  return down;
}

function leaseStoreOf(h: Harness, run: Run): Store & LeaseStore {
  h.expect(isLeaseStore(run.store), 'the store holds leases').toBe(true);
  return run.store as Store & LeaseStore;
}

export function registerConcurrencyOutage(h: Harness): void {
  h.test(
    'leases when the store fails: the fallback holds the limit, and each lease is released where it was granted',
    async (run) => {
      const store = leaseStoreOf(h, run);
      const down = downStore();
      const errors: string[] = [];
      const limiter = createConcurrencyLimiter({
        store: down,
        limit: 2,
        leaseMs: 60_000,
        prefix: run.prefix,
        onStoreError: store,
        breaker: false,
        onError: (e) => errors.push(e.code),
      });
      const leases = [];
      for (let i = 0; i < 3; i++) leases.push(await limiter.acquire('u', { cost: 1 }));
      h.expect(
        leases.map((l) => [l.allowed, l.reason]),
        'granted twice by the fallback, then denied by it',
      ).toEqual([
        [true, 'store-unavailable'],
        [true, 'store-unavailable'],
        [false, 'store-unavailable'],
      ]);
      h.expect(leases[2]!.retryAfterMs! > 0, 'the fallback says how long').toBe(true);
      h.expect(errors, 'onError told of each failure').toEqual(Array(3).fill('STORE_UNAVAILABLE'));
      const callsBefore = down.calls;
      await leases[0]!.release();
      h.expect(down.calls, 'a fallback lease is not released on the failed store').toBe(
        callsBefore,
      );
      const direct = createConcurrencyLimiter({
        store,
        limit: 2,
        leaseMs: 60_000,
        prefix: run.prefix,
      });
      const one = await direct.acquire('u');
      h.expect([one.allowed, one.remaining], 'the release freed a slot in the fallback').toEqual([
        true,
        0,
      ]);
      h.expect((await direct.acquire('u')).allowed, 'and only one').toBe(false);
    },
  );

  h.test(
    "leases default to the store's own fallback() where it has one, else to throwing",
    async (run) => {
      const store = leaseStoreOf(h, run);
      const own = (store as { fallback?: () => Store }).fallback;
      const limiter = createConcurrencyLimiter({
        store: downStore(own === undefined ? undefined : () => own.call(store)),
        limit: 1,
        leaseMs: 60_000,
        prefix: run.prefix,
        breaker: false,
      });
      if (own === undefined) {
        await expectCode(h, 'no fallback: the failure', 'STORE_UNAVAILABLE', () =>
          limiter.acquire('u'),
        );
        return;
      }
      const lease = await limiter.acquire('u');
      h.expect([lease.allowed, lease.reason], 'granted by the fallback').toEqual([
        true,
        'store-unavailable',
      ]);
      h.expect((await limiter.acquire('u')).allowed, 'which holds the limit').toBe(false);
      await lease.release();
      h.expect((await limiter.acquire('u')).allowed, 'and frees on release').toBe(true);
    },
  );
}
