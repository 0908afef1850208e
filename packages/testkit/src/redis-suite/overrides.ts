// Per-identity overrides on one Redis node, per adapter (registered by redisStoreTests): the
// commands they cost, counted by the server (one EVALSHA per decision with or without them),
// exact admission under load with the batch script, the largest script Lua must compile, and
// NOSCRIPT recovery of the override script.
import {
  createLimiter,
  fixedWindow,
  type Policy,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { commandCalls, delta } from '../redis-inspect.js';
import type { RedisServer } from '../redis-server.js';
import { redisCommand } from '../resp.js';
import { openClient, tagOf } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

const HOUR = 3_600_000;

/**
 * Commands sent, less the change feed's announcements (an override may publish) and the DEL the
 * override script runs for a policy it leaves without one (commandstats counts it too).
 */
async function sent(port: number, before: Record<string, number>) {
  const { publish: _, del: __, ...rest } = delta(before, await commandCalls(port));
  return rest;
}

export function registerRedisOverrideTests<C>(
  api: RedisSuiteApi,
  adapter: RedisStoreAdapter<C>,
  server: () => RedisServer,
  client: () => C,
): void {
  const { it, expect } = api;
  const tag = tagOf(adapter);
  const make = (
    store: ReturnType<typeof adapter.makeStore>,
    policy: Policy | Policy[],
    prefix: string,
  ) =>
    createLimiter({
      store,
      policy,
      prefix,
      onStoreError: 'throw',
      timeoutMs: 10_000, // exact counts, not timeouts: generous on a loaded machine
      blockCache: false,
      overrides: true,
    });

  it('overrides: one EVALSHA per decision with or without one; one per write or read', async () => {
    const port = server().port;
    const policies = [
      tokenBucket({ limit: 5, interval: '1m', name: 'tb' }),
      fixedWindow({ limit: 50, window: '1h', name: 'fw' }),
    ];
    const plain = createLimiter({
      store: adapter.makeStore(client()),
      policy: policies,
      prefix: `ovp-${tag}`,
      onStoreError: 'throw',
      blockCache: false,
    });
    const limiter = make(adapter.makeStore(client()), policies, `ovo-${tag}`);
    await plain.limit('warm');
    await limiter.limit('warm');
    await limiter.override('warm', { limit: 0, until: Date.now() + HOUR }); // every script cached
    await limiter.overrides.get('warm');
    let before = await commandCalls(port);
    for (let i = 0; i < 4; i++) await plain.limit('k');
    await plain.peek('k');
    expect(await sent(port, before), 'without overrides').toEqual({ evalsha: 5 });
    before = await commandCalls(port);
    for (let i = 0; i < 4; i++) await limiter.limit('k');
    await limiter.peek('k');
    expect(await sent(port, before), 'with, none stored').toEqual({ evalsha: 5 });
    before = await commandCalls(port);
    const until = Date.now() + HOUR;
    await limiter.override('o', { limit: { tb: 7 }, until });
    expect(await sent(port, before), 'a write').toEqual({ evalsha: 1 });
    before = await commandCalls(port);
    const ds = [];
    for (let i = 0; i < 8; i++) ds.push(await limiter.limit('o'));
    expect(await sent(port, before), 'with one stored').toEqual({ evalsha: 8 });
    expect(ds.map((d) => [d.allowed, d.limit])).toEqual([
      ...Array.from({ length: 7 }, () => [true, 7]),
      [false, 7],
    ]);
    before = await commandCalls(port);
    expect(await limiter.overrides.get('o')).toEqual({ limit: { tb: 7 }, until });
    await limiter.overrides.clear('o');
    expect(await sent(port, before), 'a read and a clear').toEqual({ evalsha: 2 });
  });

  for (const batch of [false, true]) {
    it(`overrides: exact admission under hundreds of concurrent calls (batch: ${batch})`, async () => {
      const piped = await openClient(adapter, server().url, { autoPipelining: true });
      try {
        const limiter = make(
          adapter.makeStore(piped, { batch: batch && { maxCalls: 64 } }),
          fixedWindow({ limit: 10, window: '1d' }),
          `ovc-${batch}-${tag}`,
        );
        await limiter.override('hot', { limit: 37, until: Date.now() + HOUR });
        await limiter.override('banned', { limit: 0, until: Date.now() + HOUR });
        const before = await commandCalls(server().port);
        const [hot, banned, plain] = await Promise.all(
          ['hot', 'banned', 'plain'].map((id) =>
            Promise.all(Array.from({ length: 150 }, () => limiter.limit(id))),
          ),
        );
        const admitted = hot!.filter((d) => d.allowed);
        expect(admitted).toHaveLength(37);
        expect(admitted.map((d) => d.remaining).sort((a, b) => a - b)).toEqual(
          Array.from({ length: 37 }, (_, i) => i),
        );
        expect(banned!.filter((d) => d.allowed)).toHaveLength(0);
        expect(plain!.filter((d) => d.allowed)).toHaveLength(10);
        const scripts = (await sent(server().port, before)).evalsha ?? 0;
        if (batch) expect(scripts).toBeLessThan(450);
        else expect(scripts).toBe(450);
      } finally {
        await adapter.disconnect(piped);
      }
    });
  }

  it('overrides: a 16-policy script (blockFor, shadow, overrides) fits Lua, alone and batched', async () => {
    const piped = await openClient(adapter, server().url, { autoPipelining: true });
    try {
      const policies = Array.from({ length: 16 }, (_, i) => {
        const name = `p${i}`;
        if (i % 3 === 0) return fixedWindow({ limit: 100, window: '1d', name, blockFor: '1h' });
        if (i % 3 === 1) return slidingWindow({ limit: 100, window: '1h', name, shadow: i === 1 });
        return slidingWindowLog({ limit: 100, window: '1h', name });
      });
      const limiter = make(adapter.makeStore(piped), policies, `ov16-${tag}`);
      await limiter.override('x', { limit: { p0: 3 }, until: Date.now() + HOUR });
      const ds = await Promise.all(Array.from({ length: 5 }, () => limiter.limit('x')));
      expect(ds.filter((d) => d.allowed)).toHaveLength(3);
      expect(ds[0]!.policies[0]!.override?.limit).toBe(3);
    } finally {
      await adapter.disconnect(piped);
    }
  });

  it('overrides: a cost above an overridden log limit is denied, never a script error', async () => {
    // No entry in the window can hold the unit that would have to leave: the script read one
    // that is not there, and every such call failed with STORE_UNAVAILABLE.
    const limiter = make(
      adapter.makeStore(client()),
      slidingWindowLog({ limit: 5, window: '1s' }),
      `ovlog-${tag}`,
    );
    const until = Date.now() + HOUR;
    await limiter.override('empty', { limit: 1, until });
    const empty = await limiter.limit('empty', { cost: 2 });
    expect([empty.allowed, empty.retryAfterMs]).toEqual([false, 1000]);
    expect((await limiter.limit('used')).allowed).toBe(true);
    await limiter.override('used', { limit: 1, until });
    const used = await limiter.limit('used', { cost: 2 });
    expect(used.allowed).toBe(false);
    expect(used.retryAfterMs).toBeGreaterThan(0);
    expect(used.retryAfterMs).toBeLessThanOrEqual(1000);
  });

  it('overrides: after SCRIPT FLUSH the override and limit scripts load again', async () => {
    const port = server().port;
    const limiter = make(
      adapter.makeStore(client()),
      fixedWindow({ limit: 1, window: '1d' }),
      `ovf-${tag}`,
    );
    await limiter.limit('f');
    await redisCommand(port, ['SCRIPT', 'FLUSH']);
    const until = Date.now() + HOUR;
    await limiter.override('f', { limit: 2, until });
    expect(await limiter.overrides.get('f')).toEqual({ limit: 2, until });
    await redisCommand(port, ['SCRIPT', 'FLUSH']);
    const d = await limiter.limit('f');
    expect([d.allowed, d.limit, d.remaining]).toEqual([true, 2, 0]);
  });
}
