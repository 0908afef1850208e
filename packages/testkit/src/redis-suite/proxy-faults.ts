import { createLimiter, type Decision, fixedWindow, type LimiterOptions } from '@floodgate/core';
import type { BreakerState, Store } from '@floodgate/core/store';
import { startFaultProxy } from '../fault-proxy.js';
import { keysFor } from '../redis-inspect.js';
import { type RedisServer, startRedisServer } from '../redis-server.js';
import { redisCommand } from '../resp.js';
import { openClient, sleep, storeCall, tagOf, useRedisServer } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

/**
 * The adapters `redisProxyFaultTests` runs, one `describe` each.
 * @example
 * ```ts
 * import type { NodeRedisClient } from '@floodgate/node-redis';
 * import { type RedisProxyFaultTestsOptions, type RedisStoreAdapter, redisProxyFaultTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const REDIS_6: RedisStoreAdapter<NodeRedisClient>; // test/adapters.ts
 * declare const REDIS_4: RedisStoreAdapter<NodeRedisClient>; // survivesCutReplies: false
 * const options: RedisProxyFaultTestsOptions<NodeRedisClient> = { adapters: [REDIS_6, REDIS_4] };
 * redisProxyFaultTests({ describe, it, expect, beforeAll, afterAll }, options);
 * ```
 * @public
 */
export interface RedisProxyFaultTestsOptions<C> {
  /** One `describe` per adapter. */
  adapters: readonly RedisStoreAdapter<C>[];
}

const POLICY = fixedWindow({ limit: 5, window: '1h' });

/** Counts the store calls that got past the limiter (and its breaker). */
function counted(store: Store): Store & { calls: number } {
  const wrapper = {
    calls: 0,
    remote: true as const,
    evaluate: (call: Parameters<Store['evaluate']>[0]) => {
      wrapper.calls++;
      return store.evaluate(call);
    },
    reset: (keys: readonly string[]) => store.reset(keys),
  };
  return wrapper;
}

async function timed(fn: () => Promise<Decision>): Promise<{ d: Decision; ms: number }> {
  const started = performance.now();
  const d = await fn();
  return { d, ms: performance.now() - started };
}

/**
 * What production networks do between an app and Redis, through a real TCP proxy: latency beyond
 * `timeoutMs`, a stall, replies cut mid-way, refused connections; and a server stopped with
 * SIGSTOP. Every fault is answered by `onStoreError` in bounded time, and a call its caller gave up
 * on charges nothing, even when Redis runs it later.
 * @example
 * A store package's whole `test/proxy-faults.test.ts`:
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisStoreAdapter, redisProxyFaultTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const IOREDIS: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts
 * redisProxyFaultTests({ describe, it, expect, beforeAll, afterAll }, { adapters: [IOREDIS] });
 * ```
 * @public
 */
export function redisProxyFaultTests<C>(
  api: RedisSuiteApi,
  options: RedisProxyFaultTestsOptions<C>,
): void {
  const { describe, it, expect, beforeAll, afterAll } = api;
  const server = useRedisServer(api);
  let unhandled = 0;
  const onUnhandled = () => {
    unhandled++;
  };
  beforeAll(() => process.on('unhandledRejection', onUnhandled));
  afterAll(() => {
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toBe(0);
  });

  for (const adapter of options.adapters) {
    describe(`network faults with ${adapter.name}`, () => {
      const tag = tagOf(adapter);
      /** A client through a new proxy, a limiter on it, and the Redis key of identity 'u'. */
      async function setup(name: string, extra: Partial<LimiterOptions> = {}) {
        const proxy = await startFaultProxy({ target: server() });
        const client = adapter.create(proxy.url, { reconnectMs: 50 });
        await adapter.connect(client);
        const store = counted(adapter.makeStore(client));
        const prefix = `${name}-${tag}`;
        const limiter = createLimiter({
          store,
          policy: POLICY,
          prefix,
          timeoutMs: 50,
          onStoreError: 'deny',
          breaker: false,
          blockCache: false,
          ...extra,
        });
        // One decision first, without a timeout (a loaded machine may be slow to answer it): the
        // store learns Redis's clock from its reply, and every deadline is sent in that clock.
        const warm = createLimiter({ store, policy: POLICY, prefix, onStoreError: 'throw' });
        expect((await warm.limit('warm-up')).reason).toBeUndefined();
        const key = keysFor(prefix, 'u', [POLICY])[0]!;
        const done = async () => {
          await adapter.disconnect(client);
          await proxy.close();
        };
        return { proxy, store, limiter, warm, key, done };
      }
      const exists = async (key: string) => redisCommand(server().port, ['EXISTS', key]);

      it('latency beyond timeoutMs: answered by onStoreError in time, and no late charge', async () => {
        const { proxy, limiter, warm, key, done } = await setup('lat');
        try {
          proxy.set('none', { latencyMs: 200 });
          for (let i = 0; i < 5; i++) {
            const { d, ms } = await timed(() => limiter.limit('u'));
            expect([d.allowed, d.reason]).toEqual([false, 'store-timeout']);
            expect(ms).toBeLessThan(50 + 250); // the timeout plus scheduling slack on a busy machine
          }
          proxy.set('none', { latencyMs: 0 });
          await sleep(600); // every late script has reached Redis by now, and refused to charge
          expect(await exists(key)).toBe(0);
          // Checked without a timeout: a loaded machine must not turn this into a fallback answer.
          expect((await warm.limit('u')).remaining).toBe(4);
        } finally {
          await done();
        }
      });

      it("a deadline of now: late at Redis, alone and batched (the deadline's own ms charges nothing)", async () => {
        // The caller may give up within the deadline's ms: a script that reads that ms must
        // refuse. The deadline sent errs early, so the script always reads it or later.
        const client = await openClient(adapter, server().url);
        try {
          for (const batch of [false, true]) {
            const store = adapter.makeStore(client, { batch });
            const prefix = `now-${batch}-${tag}`;
            const warm = {
              ...storeCall(prefix, 'warm', POLICY),
              deadline: performance.now() + 1e5,
            };
            expect((await store.evaluate(warm))[0]!.allowed).toBe(true); // Redis's clock learnt
            for (let i = 0; i < 10; i++) {
              const calls = [0, 1, 2, 3].map((j) => ({
                ...storeCall(prefix, `k${i}-${j}`, POLICY),
                deadline: performance.now(),
              }));
              const settled = await Promise.allSettled(calls.map((c) => store.evaluate(c)));
              const codes = settled.map((r) => r.status === 'rejected' && r.reason.code);
              expect(codes).toEqual(Array(4).fill('STORE_TIMEOUT'));
              for (const c of calls) {
                expect(await redisCommand(server().port, ['EXISTS', c.keys[0]!])).toBe(0);
              }
            }
          }
        } finally {
          await adapter.disconnect(client);
        }
      });

      it('a stall: answered in time, the breaker opens and answers at once, nothing charged when it heals', async () => {
        const states: BreakerState[] = [];
        const { proxy, store, limiter, key, done } = await setup('stall', {
          breaker: { failures: 3, cooldownMs: 500, onStateChange: (s) => states.push(s) },
        });
        try {
          const callsBefore = store.calls;
          proxy.set('stall');
          const slow = [];
          for (let i = 0; i < 3; i++) slow.push(await timed(() => limiter.limit('u')));
          expect(slow.map((t) => t.d.reason)).toEqual(Array(3).fill('store-timeout'));
          expect(states).toEqual(['open']);
          const fast = [];
          for (let i = 0; i < 30; i++) fast.push(await timed(() => limiter.limit('u')));
          expect(fast.every((t) => t.d.reason === 'store-unavailable' && !t.d.allowed)).toBe(true);
          // No timeout waited: the median open-breaker decision takes microseconds, not 50 ms.
          const sorted = fast.map((t) => t.ms).sort((a, b) => a - b);
          expect(sorted[15]).toBeLessThan(5);
          expect(store.calls - callsBefore).toBe(3);
          proxy.set('none'); // the held scripts reach Redis now, long past their deadlines
          await sleep(600);
          expect(await exists(key)).toBe(0);
          const after = await limiter.limit('u'); // the probe, and the breaker closes
          expect([after.allowed, after.remaining, after.reason]).toEqual([true, 4, undefined]);
          expect(states).toEqual(['open', 'half-open', 'closed']);
        } finally {
          await done();
        }
      });

      if (adapter.survivesCutReplies !== false)
        it('replies cut mid-way: every call answered once, never over the limit, exact once healed', async () => {
          const { proxy, limiter, done } = await setup('drop', { timeoutMs: 300 });
          try {
            proxy.set('drop');
            const settled: Decision[] = [];
            await Promise.all(
              Array.from({ length: 30 }, () => limiter.limit('d').then((d) => settled.push(d))),
            );
            expect(settled).toHaveLength(30);
            const byRedis = settled.filter((d) => d.allowed && d.reason === undefined).length;
            expect(byRedis).toBeLessThanOrEqual(5);
            proxy.set('none');
            // The client reconnects at its own pace; the first decision Redis answers ends the wait.
            const deadline = performance.now() + 5000;
            while ((await limiter.peek('fresh')).reason !== undefined) {
              if (performance.now() > deadline) throw new Error('the client did not recover');
              await sleep(50);
            }
            await sleep(400); // late scripts from the cut connections have run (and refused)
            const clean = [];
            for (let i = 0; i < 7; i++) clean.push(await limiter.limit('fresh'));
            expect(clean.map((d) => d.allowed)).toEqual([
              true,
              true,
              true,
              true,
              true,
              false,
              false,
            ]);
            expect(clean.every((d) => d.reason === undefined)).toBe(true);
          } finally {
            await done();
          }
        });

      it('refused connections: decisions keep coming, the store is only probed, attempts stay at the reconnect pace', async () => {
        const { proxy, store, limiter, done } = await setup('refuse', {
          timeoutMs: 100,
          breaker: { failures: 3, cooldownMs: 200 },
        });
        try {
          proxy.set('refuse');
          proxy.cutAll();
          const attemptsBefore = proxy.connections;
          const callsBefore = store.calls;
          const until = performance.now() + 2000;
          let decisions = 0;
          while (performance.now() < until) {
            const d = await limiter.limit(`r${decisions % 50}`);
            expect(d.reason === 'store-unavailable' || d.reason === 'store-timeout').toBe(true);
            decisions++;
            if (decisions % 50 === 0) await sleep(1);
          }
          const attempts = proxy.connections - attemptsBefore;
          // The breaker lets a probe through every 200 ms: 3 failures to open, then about 10.
          expect(store.calls - callsBefore).toBeLessThanOrEqual(3 + 12);
          // Reconnects run at the client's own pace (every 50 ms), not at the decisions' rate.
          expect(decisions).toBeGreaterThan(500);
          expect(attempts).toBeLessThanOrEqual(2000 / 50 + 10);
          proxy.set('none');
          const deadline = performance.now() + 5000;
          let healed = await limiter.limit('healed');
          while (healed.reason !== undefined && performance.now() < deadline) {
            await sleep(20);
            healed = await limiter.limit('healed');
          }
          expect(healed.reason).toBeUndefined();
        } finally {
          await done();
        }
      });

      for (const fallback of ['deny', 'the in-process fallback'] as const) {
        it(`a SIGSTOPped server (${fallback}): calls abandoned by timeoutMs charge nothing after SIGCONT`, async () => {
          const own: RedisServer = await startRedisServer();
          const client = adapter.create(own.url, { reconnectMs: 50 });
          await adapter.connect(client);
          try {
            const limiter = createLimiter({
              store: adapter.makeStore(client),
              policy: fixedWindow({ limit: 3, window: '1h' }),
              timeoutMs: 100,
              breaker: false,
              ...(fallback === 'deny' ? { onStoreError: 'deny' as const } : {}),
            });
            process.kill(own.pid, 'SIGSTOP');
            const during: Decision[] = [];
            try {
              for (let i = 0; i < 3; i++) during.push(await limiter.limit('u'));
            } finally {
              process.kill(own.pid, 'SIGCONT');
            }
            expect(during.map((d) => d.reason)).toEqual(Array(3).fill('store-timeout'));
            expect(during.every((d) => d.allowed === (fallback !== 'deny'))).toBe(true);
            await sleep(300);
            const after = [];
            for (let i = 0; i < 4; i++) after.push(await limiter.limit('u'));
            expect(after.map((d) => [d.allowed, d.remaining, d.reason])).toEqual([
              [true, 2, undefined],
              [true, 1, undefined],
              [true, 0, undefined],
              [false, 0, undefined],
            ]);
          } finally {
            await adapter.disconnect(client);
            await own.stop();
          }
        });
      }
    });
  }
}
