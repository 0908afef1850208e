// The concurrency limiter's Redis side, per adapter (registered by redisStoreTests): one
// EVALSHA per acquire, release and extend, the key living exactly as long as its latest lease,
// a member per slot, NOSCRIPT recovery, and the client clock when asked for; its outage story
// on servers of their own (lease-outage.ts).
import { createLimiter, fixedWindow } from '@floodgate/core';
import { createConcurrencyLimiter } from '@floodgate/core/concurrency';
import { isLeaseStore, type LeaseStore, type Store } from '@floodgate/core/store';
import { commandCalls, delta } from '../redis-inspect.js';
import type { RedisServer } from '../redis-server.js';
import { redisCommand } from '../resp.js';
import { registerRedisLeaseOutageTests } from './lease-outage.js';
import { tagOf } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

function leaseStore(store: Store): Store & LeaseStore {
  if (!isLeaseStore(store)) throw new TypeError('the store cannot hold leases');
  return store;
}

export function registerRedisLeaseTests<C>(
  api: RedisSuiteApi,
  adapter: RedisStoreAdapter<C>,
  server: () => RedisServer,
  client: () => C,
): void {
  const { it, expect } = api;
  const tag = tagOf(adapter);
  registerRedisLeaseOutageTests(api, adapter);

  it('leases: one EVALSHA per acquire, release and extend; the key lives as long as its latest lease', async () => {
    const port = server().port;
    const store = leaseStore(adapter.makeStore(client()));
    const limiter = createConcurrencyLimiter({
      store,
      limit: 5,
      leaseMs: 10_000,
      prefix: `ls-${tag}`,
    });
    await (await limiter.acquire('warm')).release();
    const key = limiter.key('u');
    let before = await commandCalls(port);
    const lease = await limiter.acquire('u', { cost: 3 });
    expect(delta(before, await commandCalls(port))).toEqual({ evalsha: 1 });
    expect(lease.remaining).toBe(2);
    // One member per slot, all with the lease's expiry.
    expect(await redisCommand(port, ['ZCARD', key])).toBe(3);
    const ttl = Number(await redisCommand(port, ['PTTL', key]));
    expect(ttl).toBeGreaterThan(9_000);
    expect(ttl).toBeLessThanOrEqual(10_000);
    before = await commandCalls(port);
    expect(await lease.extend(60_000)).toBe(true);
    expect(delta(before, await commandCalls(port))).toEqual({ evalsha: 1 });
    expect(Number(await redisCommand(port, ['PTTL', key]))).toBeGreaterThan(59_000);
    before = await commandCalls(port);
    await lease.release();
    await lease.release();
    expect(delta(before, await commandCalls(port))).toEqual({ evalsha: 1 });
    // The last lease gone, the sorted set is gone with it.
    expect(await redisCommand(port, ['EXISTS', key])).toBe(0);
  });

  it('leases: reloads the lease script after SCRIPT FLUSH', async () => {
    const port = server().port;
    const store = leaseStore(adapter.makeStore(client()));
    const limiter = createConcurrencyLimiter({
      store,
      limit: 1,
      leaseMs: 10_000,
      prefix: `lf-${tag}`,
    });
    await (await limiter.acquire('warm')).release();
    await redisCommand(port, ['SCRIPT', 'FLUSH']);
    const before = await commandCalls(port);
    const lease = await limiter.acquire('u');
    expect(lease.allowed).toBe(true);
    expect(delta(before, await commandCalls(port))).toEqual({ evalsha: 1, eval: 1 });
    expect((await limiter.acquire('u')).allowed).toBe(false);
    await lease.release();
    expect((await limiter.acquire('u')).allowed).toBe(true);
  });

  it("leases: clock 'client' teaches the store no wrong Redis time (a rate limit beside them is not refused as late)", async () => {
    // A caller's clock a day behind Redis's: a lease reply once carried it back as if it were
    // Redis TIME, and every later deadline fell a day early.
    const now = Date.now() - 86_400_000;
    const store = adapter.makeStore(client(), { clock: 'client', now: () => now });
    const leases = createConcurrencyLimiter({
      store: leaseStore(store),
      limit: 1,
      leaseMs: 60_000,
      prefix: `lt-${tag}`,
    });
    await (await leases.acquire('u')).release();
    const limiter = createLimiter({
      store,
      policy: fixedWindow({ limit: 5, window: '1h' }),
      prefix: `lt-${tag}`,
      blockCache: false,
    });
    const d = await limiter.limit('u');
    expect([d.allowed, d.reason]).toEqual([true, undefined]);
  });

  it("leases: clock 'client' expires them on the caller's clock", async () => {
    let now = Date.now();
    const store = leaseStore(adapter.makeStore(client(), { clock: 'client', now: () => now }));
    const limiter = createConcurrencyLimiter({
      store,
      limit: 1,
      leaseMs: 60_000,
      prefix: `lc-${tag}`,
    });
    const old = await limiter.acquire('u');
    expect(old.allowed).toBe(true);
    now += 59_999;
    const denied = await limiter.acquire('u');
    expect([denied.allowed, denied.retryAfterMs]).toEqual([false, 1]);
    now += 1;
    expect((await limiter.acquire('u')).allowed).toBe(true);
    expect(await old.extend()).toBe(false);
  });
}
