import {
  createLimiter,
  type Decision,
  fixedWindow,
  leakyBucket,
  type Policy,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { startFaultProxy } from '../fault-proxy.js';
import { commandCalls, delta, rng } from '../redis-inspect.js';
import { redisCommand } from '../resp.js';
import { busyBatchTests } from './batch-busy.js';
import { hotIdentityTests } from './batch-hot.js';
import { loneCallTests } from './batch-lone.js';
import { repeatsTests } from './batch-repeats.js';
import { openClient, sleep, storeCall, tagOf, useRedisServer } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

/**
 * Options of `redisBatchTests`: the adapters to run it on, and the seed of its random traces.
 * @example
 * The batching suite on two client generations, with a seed of its own:
 * ```ts
 * import { type RedisBatchTestsOptions, type RedisStoreAdapter, redisBatchTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const IOREDIS_5: RedisStoreAdapter<unknown>; // test/adapters.ts
 * declare const IOREDIS_6: RedisStoreAdapter<unknown>;
 * const options: RedisBatchTestsOptions<unknown> = { adapters: [IOREDIS_5, IOREDIS_6], seed: 7 };
 * redisBatchTests({ describe, it, expect, beforeAll, afterAll }, options);
 * ```
 * @public
 */
export interface RedisBatchTestsOptions<C> {
  /** One `describe` per adapter. */
  adapters: readonly RedisStoreAdapter<C>[];
  /** Seed of the random traces. @default 10 */
  seed?: number;
}

// The limiters share each store, so one tick holds calls of three combinations of kinds; the
// first two share theirs with other parameters, so one run holds calls of two parameter blocks
// (batch.lua, ARGV), besides the blocks of peeks and of other costs.
const LIMITERS: readonly (readonly Policy[])[] = [
  [tokenBucket({ limit: 6, interval: '10s' }), fixedWindow({ limit: 9, window: '7s' })],
  [tokenBucket({ limit: 4, interval: '3s' }), fixedWindow({ limit: 5, window: '2s' })],
  [
    slidingWindow({ limit: 5, window: '3s' }),
    slidingWindowLog({ limit: 4, window: '2s' }),
    leakyBucket({ limit: 3, interval: '1s', queue: 2 }),
  ],
  // A shadowed policy beside enforced ones, with penalties: charged apart (compose.ts).
  [
    fixedWindow({ limit: 4, window: '5s', shadow: true, blockFor: '2s' }),
    tokenBucket({ limit: 5, interval: '8s' }),
    slidingWindow({ limit: 7, window: '4s', blockFor: '1s' }),
  ],
];

type Outcome = Decision | 'reset' | string;

/**
 * The `batch` option of a Redis store: the same random trace of limit, peek and reset calls,
 * many in flight per tick, decided batched and one script run per call, gives the same decisions
 * while the batched run sends a fraction of the `EVALSHA`s; a call made with nothing in flight
 * runs the plain script alone and the calls made while it is in flight go as one batch; a call
 * past its deadline inside a batch charges nothing while its batch-mates are charged; a
 * connection lost under a batch settles every call of it as it would have settled alone, with
 * nothing left hanging. The tests that compare decisions call by call, or need the lone call to
 * run before the batch behind it, are registered only for an adapter that is `ordered`.
 * @example
 * A store package's whole `test/batch.test.ts`:
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisStoreAdapter, redisBatchTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const IOREDIS: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts
 * redisBatchTests({ describe, it, expect, beforeAll, afterAll }, { adapters: [IOREDIS] });
 * ```
 * @public
 */
export function redisBatchTests<C>(api: RedisSuiteApi, options: RedisBatchTestsOptions<C>): void {
  const { describe, it, expect } = api;
  const server = useRedisServer(api);

  for (const adapter of options.adapters) {
    describe(`batching with ${adapter.name}`, () => {
      const tag = tagOf(adapter);
      const modes = adapter.autoPipelining === true ? [false, true] : [undefined];

      /** Runs the trace of `seed` on a fresh store; its outcomes and the EVALSHAs it sent. */
      async function trace(seed: number, batch: boolean, autoPipelining: boolean | undefined) {
        const client = await openClient(adapter, server().url, { autoPipelining });
        let clock = 1_700_000_000_000;
        const store = adapter.makeStore(client, { clock: 'client', now: () => clock, batch });
        const prefix = `bt-${tag}-${seed}-${batch}-${autoPipelining}`;
        const limiters = LIMITERS.map((policy, i) =>
          createLimiter({
            store,
            policy: [...policy],
            prefix: `${prefix}-${i}`,
            onStoreError: 'throw',
            timeoutMs: 10_000, // exact counts, not timeouts: generous on a loaded machine
            blockCache: false,
          }),
        );
        // Both scripts loaded first: a NOSCRIPT reload lets later commands overtake the call.
        // Of three calls in one tick the first goes alone, the other two as a batch.
        for (const limiter of limiters) {
          await Promise.all([0, 1, 2].map(() => limiter.limit('warm')));
          await limiter.limit('warm');
        }
        const random = rng(seed);
        const pick = (n: number) => Math.floor(random() * n);
        const outcomes: Outcome[] = [];
        const before = await commandCalls(server().port);
        try {
          for (let round = 0; round < 40; round++) {
            clock += pick(4) === 0 ? 0 : pick(1500);
            const calls: Promise<Outcome>[] = [];
            const n = 1 + pick(round % 5 === 0 ? 150 : 40);
            for (let i = 0; i < n; i++) {
              const limiter = limiters[pick(limiters.length)]!;
              const identity = `u${pick(6)}`;
              const r = random();
              const settle = (p: Promise<Decision | undefined>) =>
                p.then(
                  (d) => d ?? 'reset',
                  (e: { code?: string }) => String(e.code),
                );
              if (r < 0.04) calls.push(settle(limiter.reset(identity).then(() => undefined)));
              else if (r < 0.2) calls.push(settle(limiter.peek(identity)));
              else calls.push(settle(limiter.limit(identity, { cost: 1 + pick(2) })));
            }
            outcomes.push(...(await Promise.all(calls)));
          }
        } finally {
          await adapter.disconnect(client);
        }
        return { outcomes, evalsha: delta(before, await commandCalls(server().port)).evalsha };
      }

      // The run of one call per script run is the reference only when concurrent calls reach
      // Redis in the order they were made (adapter.ordered): otherwise neither run has one answer.
      for (const autoPipelining of adapter.ordered === false ? [] : modes) {
        const how = autoPipelining === undefined ? '' : ` (autoPipelining: ${autoPipelining})`;
        it(`decides a random trace, many calls per tick, exactly as one call per script run${how}`, async () => {
          const seed = options.seed ?? 10;
          for (const s of [seed, seed + 1]) {
            const one = await trace(s, false, autoPipelining);
            const batched = await trace(s, true, autoPipelining);
            expect(batched.outcomes).toEqual(one.outcomes);
            // Every outcome is a decision or a reset: no call failed, in either run.
            expect(one.outcomes.every((o) => typeof o !== 'string' || o === 'reset')).toBe(true);
            expect(one.outcomes.some((o) => typeof o === 'object' && !o.allowed)).toBe(true);
            expect(batched.evalsha!).toBeLessThan(one.evalsha! / 4);
          }
        }, 60_000);
      }

      hotIdentityTests(api, adapter, server, tag, options.seed ?? 10);
      repeatsTests(api, adapter, server, tag, options.seed ?? 10);
      loneCallTests(api, adapter, server, tag);
      busyBatchTests(api, adapter, server, tag);

      it('a call past its deadline inside a batch charges nothing; its batch-mates are charged', async () => {
        const client = await openClient(adapter, server().url);
        try {
          const store = adapter.makeStore(client, { batch: true });
          const policy = fixedWindow({ limit: 3, window: '1h' });
          const prefix = `late-${tag}`;
          // A first deadline teaches the store Redis's clock (one TIME), and a first batch loads
          // the batch script, before the batch under test.
          const warm = {
            ...storeCall(prefix, 'warm', policy),
            deadline: performance.now() + 60_000,
          };
          expect((await store.evaluate(warm))[0]!.allowed).toBe(true);
          await Promise.all([0, 1, 2].map(() => store.evaluate(warm)));
          const before = await commandCalls(server().port);
          const late = {
            ...storeCall(prefix, 'late', policy),
            deadline: performance.now() - 60_000,
          };
          // The opener goes alone; the three made while it is in flight go as one batch.
          const [, a, l, b] = await Promise.allSettled([
            store.evaluate(storeCall(prefix, 'opener', policy)),
            store.evaluate(storeCall(prefix, 'a', policy)),
            store.evaluate(late),
            store.evaluate({
              ...storeCall(prefix, 'b', policy),
              deadline: performance.now() + 60_000,
            }),
          ]);
          expect(delta(before, await commandCalls(server().port))).toEqual({ evalsha: 2 });
          expect(a.status === 'fulfilled' && a.value[0]!.remaining).toBe(2);
          expect(b.status === 'fulfilled' && b.value[0]!.remaining).toBe(2);
          expect(l.status === 'rejected' && (l.reason as { code: string }).code).toBe(
            'STORE_TIMEOUT',
          );
          expect(await redisCommand(server().port, ['EXISTS', late.keys[0]!])).toBe(0);
          expect((await store.evaluate(storeCall(prefix, 'a', policy)))[0]!.remaining).toBe(1);
        } finally {
          await adapter.disconnect(client);
        }
      });

      it("quota: calls either side of a local midnight in one batch each send their own period's ends", async () => {
        const client = await openClient(adapter, server().url);
        try {
          const H = 3_600_000;
          const midnight = Date.parse('2024-03-31T22:00:00Z'); // Berlin, after a 23-hour day
          const policy = quota({ limit: 2, per: 'day', timeZone: 'Europe/Berlin' });
          const prefix = `quota-batch-${tag}`;
          // The batch script loaded first, by another store on a fixed clock.
          const warm = adapter.makeStore(client, { clock: 'client', now: () => midnight });
          await Promise.all([0, 1, 2].map(() => warm.evaluate(storeCall(prefix, 'warm', policy))));
          const times = [midnight - 1, midnight, midnight - 2, midnight + 5, midnight - 3];
          // The opener's time first: it goes alone, the calls under test as one batch behind it.
          const clocks = [midnight, ...times];
          let i = 0;
          const store = adapter.makeStore(client, {
            clock: 'client',
            now: () => clocks[i++]!,
            batch: true,
          });
          const before = await commandCalls(server().port);
          const [, ...results] = await Promise.all([
            store.evaluate(storeCall(prefix, 'opener', policy)),
            ...times.map(() => store.evaluate(storeCall(prefix, 'k', policy))),
          ]);
          expect(delta(before, await commandCalls(server().port))).toEqual({ evalsha: 2 });
          const day = 24 * H; // 1 April in Berlin has 24 hours
          expect(
            results.map(([r]) => [r!.allowed, r!.remaining, r!.resetAfterMs, r!.retryAfterMs]),
          ).toEqual([
            [true, 1, 1, 0], // the old day's last ms
            [true, 1, day, 0], // the new day's first: a fresh count
            [true, 0, day + 2, 0], // behind, but the key is in the new day: counted there
            [false, 0, day - 5, day - 5],
            [false, 0, day + 3, day + 3],
          ]);
        } finally {
          await adapter.disconnect(client);
        }
      });

      it('an error in one call of a batch fails that call only, as it would alone', async () => {
        const client = await openClient(adapter, server().url);
        try {
          const store = adapter.makeStore(client, { batch: true });
          const policy = fixedWindow({ limit: 3, window: '1h' });
          const prefix = `wrongtype-${tag}`;
          const bad = storeCall(prefix, 'bad', policy);
          // Not a string: the script's GET fails with WRONGTYPE on this key.
          await redisCommand(server().port, ['HSET', bad.keys[0]!, 'f', '1']);
          await Promise.all([0, 1, 2].map(() => store.evaluate(storeCall(prefix, 'warm', policy))));
          const before = await commandCalls(server().port);
          // The opener goes alone; the three made while it is in flight go as one batch.
          const [, a, x, b] = await Promise.allSettled([
            store.evaluate(storeCall(prefix, 'opener', policy)),
            store.evaluate(storeCall(prefix, 'a', policy)),
            store.evaluate(bad),
            store.evaluate(storeCall(prefix, 'b', policy)),
          ]);
          expect(delta(before, await commandCalls(server().port))).toEqual({ evalsha: 2 });
          expect(a.status === 'fulfilled' && a.value[0]!.remaining).toBe(2);
          expect(b.status === 'fulfilled' && b.value[0]!.remaining).toBe(2);
          expect(x.status).toBe('rejected');
          const reason = (x as PromiseRejectedResult).reason as { code: string; message: string };
          expect(reason.code).toBe('STORE_UNAVAILABLE');
          expect(reason.message).toMatch(/WRONGTYPE/);
        } finally {
          await adapter.disconnect(client);
        }
      });

      /**
       * Twelve calls in one tick while the proxy holds the traffic, then the connection dies:
       * `cut` resets it in the proxy (the client may reconnect and resend), `close` closes the
       * client. Returns each call's outcome, or 'hung' when one is still pending after 10 s.
       */
      async function lose(how: 'cut' | 'close', batch: boolean): Promise<string[] | 'hung'> {
        const proxy = await startFaultProxy({ target: server() });
        const client = adapter.create(proxy.url, { reconnectMs: 50 });
        await adapter.connect(client);
        const store = adapter.makeStore(client, { batch });
        const policy = fixedWindow({ limit: 100, window: '1h' });
        const prefix = `${how}-${tag}-${batch}`;
        try {
          // Both scripts loaded first, so the calls under test are one EVALSHA each, or the
          // first alone and the other eleven in one.
          await store.evaluate(storeCall(prefix, 'warm', policy));
          await Promise.all([0, 1, 2].map(() => store.evaluate(storeCall(prefix, 'warm', policy))));
          proxy.set('stall');
          const before = proxy.received;
          const settled = Promise.allSettled(
            Array.from({ length: 12 }, (_, i) =>
              store.evaluate(storeCall(prefix, `c${i}`, policy)),
            ),
          );
          // The calls on the wire, held by the proxy: until it has read them and nothing more for
          // 150 ms. A fixed 50 ms was not enough on a loaded machine for a client opening a
          // connection per call (Upstash's HTTP): half of them reached the proxy after the cut.
          for (let last = -1, still = 0, waited = 0; still < 3 && waited < 5000; waited += 50) {
            await sleep(50);
            const now = proxy.received;
            still = now > before && now === last ? still + 1 : 0;
            last = now;
          }
          if (how === 'cut') {
            proxy.cutAll();
            proxy.set('none');
          } else {
            void adapter.disconnect(client);
          }
          const results = await Promise.race([settled, sleep(10_000).then(() => 'hung' as const)]);
          if (results === 'hung') return results;
          return results.map((r) =>
            r.status === 'fulfilled' ? 'ok' : String((r.reason as { code?: string }).code),
          );
        } finally {
          await adapter.disconnect(client);
          await proxy.close();
        }
      }

      for (const how of ['cut', 'close'] as const) {
        it(`a connection ${how === 'cut' ? 'reset under' : 'closed under'} a batch settles every call as it would have alone, none hangs`, async () => {
          const alone = await lose(how, false);
          const batched = await lose(how, true);
          expect(batched).not.toBe('hung');
          expect(alone).not.toBe('hung');
          // A client that resends what a lost connection left unanswered resends the batch
          // whole (ok); one that fails it fails every call with STORE_UNAVAILABLE.
          expect(new Set(batched).size).toBe(1);
          expect(batched).toEqual(alone);
          if (how === 'close') expect((batched as string[])[0]).toBe('STORE_UNAVAILABLE');
        });
      }
    });
  }
}
