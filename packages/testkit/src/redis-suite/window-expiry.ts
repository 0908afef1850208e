// How a window's key is written (common.lua's `@write window`): on the server clock once per
// window with SET and PEXPIREAT at the end of the state it holds, then INCRBY, which keeps that
// expiry; on the client clock SET … PX on every write, longer by what the caller still waits.
import {
  createLimiter,
  type Decision,
  fixedWindow,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import type { PolicyResult, StoreCall } from '@floodgate/core/store';
import { commandCalls, keysFor, rng } from '../redis-inspect.js';
import type { RedisServer } from '../redis-server.js';
import { redisCommand, redisCommands } from '../resp.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

const DAY = 86_400_000;
const LIMIT = 1000;
// One script for the three kinds that count per window; days, so no seam falls inside a test
// but at midnight UTC (checked: a run that straddles one is run again).
const policies = [
  fixedWindow({ limit: LIMIT, window: '1d' }),
  slidingWindow({ limit: LIMIT, window: '1d' }),
  quota({ limit: LIMIT, per: 'day' }),
];

async function redisTime(port: number): Promise<number> {
  const [s, us] = (await redisCommand(port, ['TIME'])) as [string, string];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

const calls = async (port: number) => {
  const info = await commandCalls(port);
  return { set: info.set ?? 0, incrby: info.incrby ?? 0 };
};

/**
 * Registers the key-write tests of the window kinds for one adapter (inside its `describe`).
 * @example
 * ```ts
 * registerWindowExpiryTests(api, adapter, server, () => client, tag);
 * ```
 */
export function registerWindowExpiryTests<C>(
  api: RedisSuiteApi,
  adapter: RedisStoreAdapter<C>,
  server: () => RedisServer,
  client: () => C,
  tag: string,
): void {
  const { it, expect } = api;

  for (const batch of [false, true]) {
    it(`server clock${batch ? ', batched' : ''}: a window's key is set once, to expire at its window's end, then raised by INCRBY`, async () => {
      const port = server().port;
      for (let attempt = 0; ; attempt++) {
        const prefix = `exp-${tag}-${batch}-${attempt}`;
        const limiter = createLimiter({
          store: adapter.makeStore(client(), { batch }),
          policy: policies,
          prefix,
          onStoreError: 'throw',
          timeoutMs: 10_000, // semantics, not timeouts: generous on a loaded machine
          blockCache: false,
        });
        const t0 = await redisTime(port);
        const c0 = await calls(port);
        await limiter.limit('u');
        const c1 = await calls(port);
        for (let i = 0; i < 4; i++) await limiter.limit('u', { cost: 2 });
        const burst = await Promise.all(Array.from({ length: 10 }, () => limiter.limit('u')));
        const c2 = await calls(port);
        // Refunds among admissions, in one batch when batched: a SET (PEXPIREAT, the same end)
        // after INCRBYs, and INCRBYs after it, leave the count every call saw one after another.
        const mixed = await Promise.all(
          ['limit', 'refund', 'limit', 'limit', 'refund', 'limit'].map((m) =>
            m === 'limit' ? limiter.limit('u') : limiter.refund('u'),
          ),
        );
        const t1 = await redisTime(port);
        if (Math.floor(t0 / DAY) !== Math.floor(t1 / DAY) && attempt === 0) continue;
        expect(burst.every((d) => d.allowed)).toBe(true);
        const day = Math.floor(t1 / DAY);
        const keys = keysFor(prefix, 'u', policies);
        const [fw, sw, q] = await redisCommands(
          port,
          keys.map((k) => ['GET', k]),
        );
        const units = 1 + 4 * 2 + 10 + 4 - 2;
        // Each admission leaves 20, 20, 21, 21 units counted: a refund came before the 2nd and 4th.
        const admitted = mixed.filter((d): d is Decision => d !== undefined);
        expect(admitted.map((d) => d.remaining)).toEqual([
          LIMIT - 20,
          LIMIT - 20,
          LIMIT - 21,
          LIMIT - 21,
        ]);
        // Packed beside the window's number by a radix of the window alone, never the limit: 2^37
        // for a day, 2^18 for each of the sliding window's two counts, 2^26 for a quota's minutes.
        expect(Number(fw)).toBe(day * 2 ** 37 + units);
        expect(Number(sw)).toBe((day * 2 ** 18 + units) * 2 ** 18);
        expect(Number(q)).toBe((((day + 1) * DAY) / 60_000) * 2 ** 26 + units);
        // The window's end to the millisecond (PEXPIRETIME, Redis 7.0): the fixed window's and the
        // day's at the next midnight, the sliding window's a window later.
        const ends = await redisCommands(
          port,
          keys.map((k) => ['PEXPIRETIME', k]),
        );
        expect(ends.map(Number)).toEqual([(day + 1) * DAY, (day + 2) * DAY, (day + 1) * DAY]);
        // One SET per key for the window's first write; none after it, only INCRBY.
        expect(c1.set - c0.set).toBe(3);
        expect(c1.incrby - c0.incrby).toBe(0);
        expect(c2.set - c1.set).toBe(0);
        const raised = c2.incrby - c1.incrby;
        if (batch) {
          // A batch raises each key once by what its calls add.
          expect(raised).toBeGreaterThanOrEqual(3 * 5);
          expect(raised).toBeLessThan(3 * 14);
        } else {
          expect(raised).toBe(3 * 14);
        }
        return;
      }
    });
  }

  it('server clock: a batch of 512 first writes, each key expiring at its window end to the ms, however late in the run', async () => {
    // SET … PX would count from each write, milliseconds after the run read TIME at its start.
    const port = server().port;
    for (let attempt = 0; ; attempt++) {
      const prefix = `exp-${tag}-wide-${attempt}`;
      const limiter = createLimiter({
        store: adapter.makeStore(client(), { batch: { maxCalls: 512 } }),
        policy: policies,
        prefix,
        onStoreError: 'throw',
        timeoutMs: 10_000, // semantics, not timeouts: generous on a loaded machine
        blockCache: false,
      });
      const ids = Array.from({ length: 513 }, (_, i) => `u${i}`);
      const t0 = await redisTime(port);
      await Promise.all(ids.map((id) => limiter.limit(id)));
      const t1 = await redisTime(port);
      if (Math.floor(t0 / DAY) !== Math.floor(t1 / DAY) && attempt === 0) continue;
      const day = Math.floor(t1 / DAY);
      const ends = await redisCommands(
        port,
        ids.flatMap((id) => keysFor(prefix, id, policies)).map((k) => ['PEXPIRETIME', k]),
      );
      const wrong = ends
        .map(Number)
        .filter((end, i) => end !== (day + 1 + (i % 3 === 1 ? 1 : 0)) * DAY);
      expect(wrong).toEqual([]);
      return;
    }
  });

  it('server clock: a random trace of admissions, denials, peeks and refunds decides and leaves each key batched exactly as one call per run', async () => {
    const port = server().port;
    const small = [
      fixedWindow({ limit: 30, window: '1d' }),
      slidingWindow({ limit: 25, window: '1d' }),
      quota({ limit: 40, per: 'day' }),
    ];
    const random = rng(7);
    const trace = Array.from({ length: 90 }, () => {
      const r = random();
      const mode: StoreCall['mode'] = r < 0.75 ? 'limit' : r < 0.9 ? 'refund' : 'peek';
      return { mode, cost: 1 + Math.floor(random() * 3), chunk: random() < 0.15 };
    });
    const run = async (batch: boolean, prefix: string) => {
      const store = adapter.makeStore(client(), { batch });
      const keys = keysFor(prefix, 'u', small);
      const out: string[] = [];
      let pending: Promise<readonly PolicyResult[]>[] = [];
      const drain = async () => {
        for (const rs of await Promise.all(pending)) {
          out.push(rs.map((r) => `${r.allowed ? 1 : 0}/${r.remaining}`).join(' '));
        }
        pending = [];
      };
      for (const { mode, cost, chunk } of trace) {
        const call = store.evaluate({ keys, policies: small, cost, mode });
        pending.push(call);
        // One call per run: each awaited alone. Batched: runs of calls made in one tick.
        if (!batch || chunk) await drain();
      }
      await drain();
      const values = await redisCommands(
        port,
        keys.map((k) => ['GET', k]),
      );
      const ends = await redisCommands(
        port,
        keys.map((k) => ['PEXPIRETIME', k]),
      );
      return { out, values, ends };
    };
    for (let attempt = 0; ; attempt++) {
      const t0 = await redisTime(port);
      const alone = await run(false, `trace-${tag}-${attempt}-one`);
      const batched = await run(true, `trace-${tag}-${attempt}-batch`);
      const t1 = await redisTime(port);
      if (Math.floor(t0 / DAY) !== Math.floor(t1 / DAY) && attempt === 0) continue;
      // The trace reaches every limit, then refunds reopen it.
      expect(alone.out.some((o) => /(^| )0\//.test(o))).toBe(true);
      expect(batched).toEqual(alone);
      return;
    }
  });

  it('client clock: every write is SET … PX, and no key outlives the last resetAfterMs by more than its caller waited', async () => {
    const port = server().port;
    let clock = Date.now();
    const prefix = `exp-${tag}-client`;
    const limiter = createLimiter({
      store: adapter.makeStore(client(), { clock: 'client', now: () => clock }),
      policy: policies,
      prefix,
      onStoreError: 'throw',
      timeoutMs: 10_000, // semantics, not timeouts: generous on a loaded machine
      blockCache: false,
    });
    const c0 = await calls(port);
    let last = await limiter.limit('u');
    for (let i = 0; i < 5; i++) {
      clock += 10;
      last = await limiter.limit('u');
    }
    const c1 = await calls(port);
    expect(c1.set - c0.set).toBe(3 * 6);
    expect(c1.incrby - c0.incrby).toBe(0);
    const keys = keysFor(prefix, 'u', policies);
    const ttls = await redisCommands(
      port,
      keys.map((k) => ['PTTL', k]),
    );
    // PX is the reset plus what the caller still waited when the script ran (compose.lua,
    // grace): under timeoutMs, and more than the reset unless Redis took all of it.
    ttls.forEach((ttl, i) => {
      expect(Number(ttl)).toBeGreaterThan(last.policies[i]!.resetAfterMs);
      expect(Number(ttl)).toBeLessThanOrEqual(last.policies[i]!.resetAfterMs + 10_000);
    });
  });

  it('client clock: a call that reaches Redis after its window would have expired on the server still counts in its window', async () => {
    // Call A is made 100 ms before its window's end (caller's time); B of the same window is made
    // 50 ms later but reaches Redis 300 ms after A (a slow network, a starved event loop), within
    // its deadline. A PX counted from A's write alone (100 ms) would be gone by then, and B would
    // be counted as its window's first.
    const window = 1000;
    let clock = Math.floor(Date.now() / window) * window + window - 100;
    const mixed = [
      fixedWindow({ limit: 5, window: '1s' }),
      tokenBucket({ limit: 10, interval: '1s' }),
      slidingWindowLog({ limit: 5, window: '100ms' }),
    ];
    const limiter = createLimiter({
      store: adapter.makeStore(client(), { clock: 'client', now: () => clock }),
      policy: mixed,
      prefix: `exp-${tag}-late`,
      onStoreError: 'throw',
      timeoutMs: 10_000,
      blockCache: false,
    });
    const a = await limiter.limit('u');
    await new Promise((r) => setTimeout(r, 300));
    clock += 50;
    const b = await limiter.limit('u');
    expect(a.policies.map((p) => p.remaining)).toEqual([4, 9, 4]);
    // The window's second admission; the bucket's second token, half a token refilled (100 ms a
    // token); the log's second entry, 50 ms after the first.
    expect(b.policies.map((p) => p.remaining)).toEqual([3, 8, 3]);
  });
}
