// The concurrency limiter on the store under test (the lease capability, `LeaseStore`): the
// limit holds, release frees exactly its own lease once, a lease frees itself after leaseMs,
// extend moves a live lease's expiry only. On the suite's clock where the store takes it; on
// real time, with short leases, where the store keeps its own clock. When the store fails:
// concurrency-outage.ts.
import {
  type ConcurrencyLimiter,
  type ConcurrencyLimiterOptions,
  createConcurrencyLimiter,
} from '@floodgate/core/concurrency';
import { isLeaseStore, type LeaseStore, type Store } from '@floodgate/core/store';
import { registerConcurrencyOutage } from './concurrency-outage.js';
import { expectCode, type Harness, type Run } from './harness.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A limiter on the run's store, counting the lease calls it makes. */
function limiterOn(
  h: Harness,
  run: Run,
  options: Omit<ConcurrencyLimiterOptions, 'store'>,
): { limiter: ConcurrencyLimiter; calls: { n: number } } {
  h.expect(
    isLeaseStore(run.store),
    'the store implements acquireLease, releaseLease, extendLease',
  ).toBe(true);
  const store = run.store as Store & LeaseStore;
  const calls = { n: 0 };
  const count = <T>(result: T): T => {
    calls.n++;
    return result;
  };
  const counted: LeaseStore = {
    acquireLease: (r) => count(store.acquireLease(r)),
    releaseLease: (l) => count(store.releaseLease(l)),
    extendLease: (l, ms) => count(store.extendLease(l, ms)),
  };
  return {
    limiter: createConcurrencyLimiter({ prefix: run.prefix, ...options, store: counted }),
    calls,
  };
}

export function registerConcurrency(h: Harness): void {
  // On the suite's clock a lease may be long (a Redis key still expires on real time); on the
  // store's own clock it must be short enough to wait for.
  const leaseMs = h.controlsTime ? 60_000 : 500;
  /** Lets `ms` pass for the store: the suite's clock, or real time. */
  const pass = async (run: Run, ms: number) => {
    if (h.controlsTime) run.advance(ms);
    else await sleep(ms);
  };

  h.api.describe('concurrency limits (leases)', () => {
    h.test('the limit holds; denials say how long until a lease expires', async (run) => {
      const { limiter } = limiterOn(h, run, { limit: 3, leaseMs });
      const held = [];
      for (let i = 0; i < 3; i++) {
        const lease = await limiter.acquire('u');
        h.expect(lease.allowed, `lease ${i + 1} of 3`).toBe(true);
        h.expect(lease.remaining, `remaining after lease ${i + 1}`).toBe(2 - i);
        h.expect(lease.retryAfterMs, 'no retryAfterMs when allowed').toBe(undefined);
        held.push(lease);
      }
      const denied = await limiter.acquire('u');
      h.expect(denied.allowed, 'a 4th lease with 3 held').toBe(false);
      h.expect(denied.remaining, 'nothing free').toBe(0);
      h.expect(denied.retryAfterMs! > 0, 'retryAfterMs is positive').toBe(true);
      h.expect(denied.retryAfterMs, 'at most leaseMs').toBeLessThanOrEqual(leaseMs);
      h.expect(await denied.extend(), 'a denial has nothing to extend').toBe(false);
      await denied.release();
      h.expect((await limiter.acquire('u')).allowed, 'a denial released nothing').toBe(false);
      h.expect((await limiter.acquire('v')).allowed, 'another identity has its own').toBe(true);
      const other = limiterOn(h, run, { limit: 3, leaseMs, prefix: `${run.prefix}x` }).limiter;
      h.expect((await other.acquire('u')).allowed, 'another prefix has its own').toBe(true);
    });

    h.test('cost takes that many slots; a release frees them all', async (run) => {
      const { limiter } = limiterOn(h, run, { limit: 5, leaseMs });
      const big = await limiter.acquire('u', { cost: 4 });
      h.expect([big.allowed, big.remaining], 'cost 4 of 5').toEqual([true, 1]);
      const two = await limiter.acquire('u', { cost: 2 });
      h.expect([two.allowed, two.remaining], 'cost 2 with 1 free').toEqual([false, 1]);
      h.expect((await limiter.acquire('u')).allowed, 'cost 1 with 1 free').toBe(true);
      await big.release();
      const after = await limiter.acquire('u', { cost: 4 });
      h.expect([after.allowed, after.remaining], 'the 4 slots are back').toEqual([true, 0]);
    });

    h.test('release frees its lease once, however often it is called', async (run) => {
      const { limiter, calls } = limiterOn(h, run, { limit: 2, leaseMs });
      const a = await limiter.acquire('u');
      const b = await limiter.acquire('u');
      h.expect(a.allowed && b.allowed, 'two leases').toBe(true);
      await Promise.all([a.release(), a.release()]);
      await a.release();
      const n = calls.n;
      await a.release();
      h.expect(calls.n, 'a released lease asks the store nothing').toBe(n);
      h.expect((await limiter.acquire('u')).allowed, 'one slot freed').toBe(true);
      h.expect((await limiter.acquire('u')).allowed, 'and only one: b still holds').toBe(false);
      h.expect(await a.extend(), 'a released lease cannot be extended').toBe(false);
    });

    h.test('a lease never released frees itself after leaseMs', async (run) => {
      const { limiter } = limiterOn(h, run, { limit: 1, leaseMs });
      h.expect((await limiter.acquire('u')).allowed, 'first').toBe(true);
      if (h.controlsTime) {
        run.advance(leaseMs - 1);
        const d = await limiter.acquire('u');
        h.expect([d.allowed, d.retryAfterMs], '1 ms before expiry').toEqual([false, 1]);
        run.advance(1);
      } else {
        h.expect((await limiter.acquire('u')).allowed, 'held').toBe(false);
        await sleep(leaseMs + 50);
      }
      h.expect((await limiter.acquire('u')).allowed, 'free once leaseMs has passed').toBe(true);
    });

    h.test('extend moves a live lease’s expiry; an expired one stays gone', async (run) => {
      const { limiter } = limiterOn(h, run, { limit: 1, leaseMs });
      const lease = await limiter.acquire('u');
      await pass(run, leaseMs * 0.6);
      h.expect(await lease.extend(), 'extend a live lease').toBe(true);
      await pass(run, leaseMs * 0.6);
      h.expect((await limiter.acquire('u')).allowed, 'held past its first expiry').toBe(false);
      await pass(run, leaseMs * 0.6);
      h.expect(await lease.extend(), 'extend after it expired').toBe(false);
      h.expect((await limiter.acquire('u')).allowed, 'an expired lease was not brought back').toBe(
        true,
      );
      if (h.controlsTime) {
        const long = await limiterOn(h, run, { limit: 1, leaseMs }).limiter.acquire('w');
        h.expect(await long.extend(leaseMs * 3), 'extend by a given duration').toBe(true);
        run.advance(leaseMs * 3 - 1);
        const d = await limiter.acquire('w');
        h.expect([d.allowed, d.retryAfterMs], 'held until the new expiry').toEqual([false, 1]);
      }
    });

    h.test(
      'a late release after expiry and re-acquire leaves the new holder alone',
      async (run) => {
        const { limiter } = limiterOn(h, run, { limit: 1, leaseMs });
        const old = await limiter.acquire('u');
        await pass(run, leaseMs + (h.controlsTime ? 0 : 50));
        const next = await limiter.acquire('u');
        h.expect(next.allowed, 'the slot went to a new holder').toBe(true);
        await old.release();
        h.expect(await old.extend(), 'the old lease cannot be extended').toBe(false);
        h.expect((await limiter.acquire('u')).allowed, 'the new holder still holds it').toBe(false);
        await next.release();
        h.expect((await limiter.acquire('u')).allowed, 'until it releases').toBe(true);
      },
    );

    if (h.controlsTime) {
      h.test('retryAfterMs is when enough slots for the cost expire', async (run) => {
        const { limiter } = limiterOn(h, run, { limit: 3, leaseMs });
        await limiter.acquire('u');
        run.advance(100);
        await limiter.acquire('u', { cost: 2 });
        run.advance(100);
        const one = await limiter.acquire('u');
        h.expect(one.retryAfterMs, 'cost 1: the first lease expires').toBe(leaseMs - 200);
        const three = await limiter.acquire('u', { cost: 3 });
        h.expect(three.retryAfterMs, 'cost 3: both must expire').toBe(leaseMs - 100);
      });
    }

    h.test('bad input throws before the store is touched', async (run) => {
      const { limiter, calls } = limiterOn(h, run, { limit: 2, leaseMs });
      const store = run.store as Store & LeaseStore;
      for (const limit of [0, -1, 1.5, Number.NaN, '2']) {
        await expectCode(h, `limit ${String(limit)}`, 'INVALID_OPTION', () =>
          createConcurrencyLimiter({ store, limit: limit as number, leaseMs }),
        );
      }
      for (const ms of [0, -5, 0.5, 'soon', undefined]) {
        await expectCode(h, `leaseMs ${String(ms)}`, 'INVALID_OPTION', () =>
          createConcurrencyLimiter({ store, limit: 2, leaseMs: ms as number }),
        );
      }
      await expectCode(h, 'a store without leases', 'INVALID_OPTION', () =>
        createConcurrencyLimiter({ store: {} as LeaseStore, limit: 2, leaseMs }),
      );
      await expectCode(h, 'prefix with a brace', 'INVALID_OPTION', () =>
        createConcurrencyLimiter({ store, limit: 2, leaseMs, prefix: 'a{b' }),
      );
      for (const id of ['', undefined, 42]) {
        await expectCode(h, `identity ${String(id)}`, 'INVALID_KEY', () =>
          limiter.acquire(id as string),
        );
      }
      for (const cost of [0, -1, 1.5, Number.NaN, '1']) {
        await expectCode(h, `cost ${String(cost)}`, 'INVALID_COST', () =>
          limiter.acquire('u', { cost: cost as number }),
        );
      }
      await expectCode(h, 'cost above the limit', 'COST_EXCEEDS_CAPACITY', () =>
        limiter.acquire('u', { cost: 3 }),
      );
      const lease = await limiter.acquire('u');
      await expectCode(h, 'extend by 0 ms', 'INVALID_OPTION', () => lease.extend(0));
      h.expect(calls.n, 'only the good acquire reached the store').toBe(1);
    });

    registerConcurrencyOutage(h);
  });
}
