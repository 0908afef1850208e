// The concurrency limiter's outage story on a real Redis, per adapter (registered by
// registerRedisLeaseTests): the rate limiter's (outage.ts, proxy-faults.ts). With default
// options, a stalled network or a stopped server is answered within the default timeout by the
// store's in-process fallback, the breaker opens, the limit holds per process, a lease is
// released where it was granted, and an acquire Redis runs after its caller gave up grants
// nothing.
import {
  type ConcurrencyLimiterOptions,
  createConcurrencyLimiter,
  type Lease,
} from '@floodgate/core/concurrency';
import { isLeaseStore, type LeaseStore } from '@floodgate/core/store';
import { startFaultProxy } from '../fault-proxy.js';
import { commandCalls } from '../redis-inspect.js';
import { type RedisServer, startRedisServer } from '../redis-server.js';
import { redisCommand } from '../resp.js';
import { sleep, tagOf } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

/** Far above the 250 ms default timeout (a loaded machine), far below a client's own queueing. */
const ACQUIRE_BOUND_MS = 2_000;

type Options = Omit<ConcurrencyLimiterOptions, 'store' | 'limit' | 'leaseMs'>;

export function registerRedisLeaseOutageTests<C>(
  api: RedisSuiteApi,
  adapter: RedisStoreAdapter<C>,
): void {
  const { it, expect } = api;
  const tag = tagOf(adapter);

  /** A limiter with default failure options (limit 2, 1-minute leases) on `client`. */
  function limiterOn(client: C, prefix: string, options: Options = {}) {
    const store = adapter.makeStore(client);
    if (!isLeaseStore(store)) throw new TypeError('the store cannot hold leases');
    return createConcurrencyLimiter({
      store: store as LeaseStore,
      limit: 2,
      leaseMs: 60_000,
      prefix: `${prefix}-${tag}`,
      ...options,
    });
  }

  async function timedAcquire(acquire: () => Promise<Lease>): Promise<Lease> {
    const started = performance.now();
    const lease = await acquire();
    expect(performance.now() - started).toBeLessThan(ACQUIRE_BOUND_MS);
    return lease;
  }

  it('leases, a stalled network: the fallback answers by the default timeout, and the held acquires grant nothing once delivered', async () => {
    const own: RedisServer = await startRedisServer();
    const proxy = await startFaultProxy({ target: own });
    const client = adapter.create(proxy.url, { reconnectMs: 50 });
    await adapter.connect(client);
    try {
      const limiter = limiterOn(client, 'lstall', { breaker: false });
      await (await limiter.acquire('warm')).release(); // the store learns Redis's clock
      const key = limiter.key('u');
      const before = await commandCalls(own.port);
      proxy.set('stall');
      const leases: Lease[] = [];
      for (let i = 0; i < 3; i++) leases.push(await timedAcquire(() => limiter.acquire('u')));
      expect(leases.map((l) => [l.allowed, l.reason])).toEqual([
        [true, 'store-timeout'],
        [true, 'store-timeout'],
        [false, 'store-timeout'], // the fallback holds the limit of 2
      ]);
      proxy.set('none'); // the three acquires reach Redis now, past their deadlines
      const ran = async () => ((await commandCalls(own.port)).evalsha ?? 0) - (before.evalsha ?? 0);
      for (let i = 0; i < 100 && (await ran()) < 3; i++) await sleep(20);
      expect(await ran()).toBe(3);
      const after = await commandCalls(own.port);
      expect((after.zadd ?? 0) - (before.zadd ?? 0)).toBe(0); // no slot was written
      expect(await redisCommand(own.port, ['EXISTS', key])).toBe(0);
      // Released where they were granted: the fallback frees them, Redis is not asked.
      for (const lease of leases) await lease.release();
      expect((await ran()) - 3).toBe(0);
      const back = await limiter.acquire('u');
      expect([back.allowed, back.reason]).toEqual([true, undefined]);
      expect(await redisCommand(own.port, ['ZCARD', key])).toBe(1);
      await back.release();
    } finally {
      await adapter.disconnect(client);
      await proxy.close();
      await own.stop();
    }
  }, 30_000);

  it('leases, a server paused then resumed: bounded acquires, the breaker opens, the fallback holds the limit; Redis decides again after', async () => {
    const own: RedisServer = await startRedisServer();
    const client = adapter.create(own.url); // the client's own reconnection and queueing
    await adapter.connect(client);
    let paused = false;
    const states: string[] = [];
    try {
      const limiter = limiterOn(client, 'lpause', {
        breaker: { onStateChange: (s) => states.push(s) },
      });
      const first = await limiter.acquire('u');
      expect([first.allowed, first.reason]).toEqual([true, undefined]);
      process.kill(own.pid, 'SIGSTOP');
      paused = true;
      const leases: Lease[] = [];
      for (let i = 0; i < 8; i++) leases.push(await timedAcquire(() => limiter.acquire('u')));
      expect(states[0]).toBe('open');
      expect(leases.every((l) => l.reason !== undefined)).toBe(true);
      // The fallback counts on its own: 2 of 2, then denied until one is released.
      expect(leases.map((l) => l.allowed)).toEqual([
        true,
        true,
        false,
        false,
        false,
        false,
        false,
        false,
      ]);
      await leases[0]!.release();
      expect((await limiter.acquire('u')).allowed).toBe(true);
      process.kill(own.pid, 'SIGCONT');
      paused = false;
      await first.release(); // granted by Redis: released there
      const until = performance.now() + 10_000;
      let back = await limiter.acquire('v');
      while (back.reason !== undefined && performance.now() < until) {
        await sleep(100);
        back = await limiter.acquire('v');
      }
      expect([back.allowed, back.reason]).toEqual([true, undefined]);
      expect(await redisCommand(own.port, ['ZCARD', limiter.key('u')])).toBe(0);
    } finally {
      if (paused) process.kill(own.pid, 'SIGCONT');
      await adapter.disconnect(client);
      await own.stop();
    }
  }, 30_000);

  it("leases, onStoreError 'throw' on a stalled network: STORE_TIMEOUT in time, and no slot held once the acquire is delivered", async () => {
    const own: RedisServer = await startRedisServer();
    const proxy = await startFaultProxy({ target: own });
    const client = adapter.create(proxy.url, { reconnectMs: 50 });
    await adapter.connect(client);
    try {
      const limiter = limiterOn(client, 'lthrow', { onStoreError: 'throw', breaker: false });
      await (await limiter.acquire('warm')).release();
      const before = await commandCalls(own.port);
      proxy.set('stall');
      const started = performance.now();
      const code = await limiter.acquire('u').then(
        () => 'granted',
        (error: { code?: string }) => error.code,
      );
      expect(code).toBe('STORE_TIMEOUT');
      expect(performance.now() - started).toBeLessThan(ACQUIRE_BOUND_MS);
      proxy.set('none');
      const ran = async () => ((await commandCalls(own.port)).evalsha ?? 0) - (before.evalsha ?? 0);
      for (let i = 0; i < 100 && (await ran()) < 1; i++) await sleep(20);
      await sleep(50); // a grant would be followed by the limiter's release: give it time to show
      const after = await commandCalls(own.port);
      expect((after.zadd ?? 0) - (before.zadd ?? 0)).toBe(0);
      expect(await redisCommand(own.port, ['EXISTS', limiter.key('u')])).toBe(0);
    } finally {
      await adapter.disconnect(client);
      await proxy.close();
      await own.stop();
    }
  }, 30_000);
}
