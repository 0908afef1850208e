import {
  createLimiter,
  FloodgateError,
  fixedWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { scriptForKinds } from '@floodgate/core/redis';
import type { Store } from '@floodgate/core/store';
import { commandCalls, delta, keysFor } from '../redis-inspect.js';
import { redisCommand } from '../resp.js';
import { registerRedisLeaseTests } from './leases.js';
import { registerRedisOverrideTests } from './overrides.js';
import { expectStoreUnavailable, openClient, storeCall, tagOf, useRedisServer } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';
import { registerWindowExpiryTests } from './window-expiry.js';

/**
 * The adapters `redisStoreTests` runs, and the class of the store's fallback.
 * @example
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { MemoryStore } from '@floodgate/memory';
 * import { type RedisStoreAdapter, type RedisStoreTestsOptions, redisStoreTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const ADAPTERS: readonly RedisStoreAdapter<IoRedisClient>[]; // test/adapters.ts
 * // `store.fallback()` must return a fresh MemoryStore.
 * const options: RedisStoreTestsOptions<IoRedisClient> = { adapters: ADAPTERS, fallback: MemoryStore };
 * redisStoreTests({ describe, it, expect, beforeAll, afterAll }, options);
 * ```
 * @public
 */
export interface RedisStoreTestsOptions<C> {
  /** One `describe` per adapter, all on one throw-away server. */
  adapters: readonly RedisStoreAdapter<C>[];
  /** The class `store.fallback()` returns a fresh instance of (`MemoryStore`). */
  fallback: abstract new (
    ...args: never[]
  ) => Store;
}

/**
 * A Redis store on one node: one `EVALSHA` per decision, one `DEL` per reset, TTLs and hash
 * slots, exact admission under concurrency, `NOSCRIPT` recovery, `STORE_UNAVAILABLE` on a closed
 * client, option checks, `remote`/`fallback()`, `rejectIfNotReady`; the concurrency limiter's leases.
 * @example
 * The start of a store package's `test/store.test.ts`:
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { MemoryStore } from '@floodgate/memory';
 * import { type RedisStoreAdapter, redisStoreTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const ADAPTERS: readonly RedisStoreAdapter<IoRedisClient>[]; // test/adapters.ts
 * redisStoreTests({ describe, it, expect, beforeAll, afterAll }, { adapters: ADAPTERS, fallback: MemoryStore });
 * ```
 * @public
 */
export function redisStoreTests<C>(api: RedisSuiteApi, options: RedisStoreTestsOptions<C>): void {
  const { describe, it, expect, beforeAll, afterAll } = api;
  const server = useRedisServer(api);

  for (const adapter of options.adapters) {
    describe(adapter.name, () => {
      const tag = tagOf(adapter);
      let client: C;
      let piped: C;
      beforeAll(async () => {
        client = await openClient(adapter, server().url);
        piped = await openClient(adapter, server().url, { autoPipelining: true });
      });
      afterAll(async () => {
        await adapter.disconnect(client);
        await adapter.disconnect(piped);
      });
      registerRedisLeaseTests(api, adapter, server, () => client);
      registerWindowExpiryTests(api, adapter, server, () => client, tag);
      registerRedisOverrideTests(api, adapter, server, () => client);

      it('sends exactly one EVALSHA per decision and one EVAL per reset (DEL and PUBLISH)', async () => {
        const limiter = createLimiter({
          store: adapter.makeStore(client),
          policy: [
            tokenBucket({ limit: 5, interval: '1m' }),
            fixedWindow({ limit: 50, window: '1h' }),
          ],
          prefix: `one-${tag}`,
          onStoreError: 'throw',
          blockCache: false,
        });
        await limiter.limit('warm'); // the script is cached from here on
        const before = await commandCalls(server().port);
        for (let i = 0; i < 8; i++) await limiter.limit('k');
        await limiter.peek('k');
        await limiter.reset('k');
        // The reset deletes the keys and announces itself on the change feed in one script run.
        expect(delta(before, await commandCalls(server().port))).toEqual({
          evalsha: 9,
          eval: 1,
          del: 1,
        });
      });

      it('decides: admits up to the limit, then denies with a retry time, and resets', async () => {
        const policies = [
          tokenBucket({ limit: 3, interval: '1m' }),
          slidingWindowLog({ limit: 5, window: '10s' }),
        ];
        const limiter = createLimiter({
          store: adapter.makeStore(client),
          policy: policies,
          prefix: `dec-${tag}`,
          onStoreError: 'throw',
          blockCache: false,
        });
        const ds = [];
        for (let i = 0; i < 4; i++) ds.push(await limiter.limit('user:{42}'));
        expect(ds.map((d) => [d.allowed, d.remaining])).toEqual([
          [true, 2],
          [true, 1],
          [true, 0],
          [false, 0],
        ]);
        expect(ds[3]!.retryAfterMs).toBeGreaterThan(19_000);
        expect(ds[3]!.retryAfterMs).toBeLessThanOrEqual(20_000);
        const peek = await limiter.peek('user:{42}');
        expect(peek.policies[1]!.remaining).toBe(2);
        for (const k of keysFor(`dec-${tag}`, 'user:{42}', policies)) {
          expect(Number(await redisCommand(server().port, ['PTTL', k]))).toBeGreaterThan(0);
        }
        await limiter.reset('user:{42}');
        expect((await limiter.limit('user:{42}')).remaining).toBe(2);
      });

      it('keeps every key of an identity in one slot and under a TTL', async () => {
        const policies = [
          tokenBucket({ limit: 5, interval: '1m' }),
          slidingWindowLog({ limit: 3, window: '10s' }),
        ];
        const limiter = createLimiter({
          store: adapter.makeStore(client),
          policy: policies,
          prefix: `slot-${tag}`,
        });
        await limiter.limit('user:{42}');
        const keys = keysFor(`slot-${tag}`, 'user:{42}', policies);
        expect(keys[0]).toMatch(/^slot-.*:\{user:%7B42%7D\}:tb:/);
        for (const k of keys) {
          expect(Number(await redisCommand(server().port, ['PTTL', k]))).toBeGreaterThan(0);
        }
        const slot = adapter.command(client, ['CLUSTER', 'KEYSLOT', keys[0]!]);
        expect(await slot.catch(() => 'no cluster')).toBeDefined();
      });

      for (const batch of [false, true]) {
        it(`admits exactly the limit under hundreds of concurrent (auto-pipelined) calls (batch: ${batch})`, async () => {
          const limiter = createLimiter({
            store: adapter.makeStore(piped, { batch: batch && { maxCalls: 64 } }),
            policy: slidingWindowLog({ limit: 37, window: '1h' }),
            prefix: `conc-${batch}-${tag}`,
            onStoreError: 'throw',
            timeoutMs: 10_000, // exact counts, not timeouts: generous on a loaded machine
            blockCache: false,
          });
          const before = await commandCalls(server().port);
          const ds = await Promise.all(Array.from({ length: 300 }, () => limiter.limit('hot')));
          const admitted = ds.filter((d) => d.allowed);
          expect(admitted).toHaveLength(37);
          expect(admitted.map((d) => d.remaining).sort((a, b) => a - b)).toEqual(
            Array.from({ length: 37 }, (_, i) => i),
          );
          // Batched: the 300 calls wait for the store's first TIME (their deadline needs Redis's
          // clock), then go together, as runs of 64, 64, 64, 64 and 44.
          expect(delta(before, await commandCalls(server().port)).evalsha).toBe(batch ? 5 : 300);
        });
      }

      it('reloads the script transparently after SCRIPT FLUSH (EVAL, same arguments)', async () => {
        const limiter = createLimiter({
          store: adapter.makeStore(client),
          policy: fixedWindow({ limit: 3, window: '1h' }),
          prefix: `nos-${tag}`,
          onStoreError: 'throw',
        });
        await limiter.limit('a');
        const port = server().port;
        await redisCommand(port, ['SCRIPT', 'FLUSH']);
        expect(
          await redisCommand(port, ['SCRIPT', 'EXISTS', scriptForKinds(['fixedWindow']).sha1]),
        ).toEqual([0]);
        const before = await commandCalls(port);
        expect((await limiter.limit('a')).remaining).toBe(1);
        expect((await limiter.limit('a')).remaining).toBe(0);
        // One failed EVALSHA, one EVAL that runs and caches the script, then EVALSHA again.
        expect(delta(before, await commandCalls(port))).toEqual({ evalsha: 2, eval: 1 });
      });

      it('a reset reaches Redis after the calls made before it: cold script cache, first TIME, client still connecting', async () => {
        const port = server().port;
        const scenarios = ['cold script cache', 'fresh store', 'client connecting'] as const;
        for (const scenario of scenarios) {
          for (const batch of [true, false]) {
            const c = adapter.create(server().url);
            const connecting = adapter.connect(c);
            if (scenario !== 'client connecting') await connecting;
            try {
              const store = adapter.makeStore(c, { batch });
              const limiter = createLimiter({
                store,
                policy: fixedWindow({ limit: 10, window: '1h' }),
                prefix: `order-${tag}-${scenario.replace(/ /g, '-')}-${batch}`,
                timeoutMs: 10_000, // generous: only its first TIME is under test
              });
              if (scenario === 'cold script cache') {
                await limiter.limit('warm'); // the store knows Redis's clock: only NOSCRIPT is left
                await redisCommand(port, ['SCRIPT', 'FLUSH']);
              }
              const calls = [limiter.limit('k'), limiter.limit('k'), limiter.limit('k')];
              const reset = limiter.reset('k');
              const later = limiter.limit('k'); // made after the reset: charged after it
              await connecting;
              const ds = [...(await Promise.all(calls)), await later, await limiter.limit('k')];
              await reset;
              // Redis decided each (no fallback), and the reset fell between the first 3 and the rest.
              expect(
                ds.map((d) => [d.reason, d.remaining]),
                `${scenario}, batch ${batch}`,
              ).toEqual([
                [undefined, 9],
                [undefined, 8],
                [undefined, 7],
                [undefined, 9],
                [undefined, 8],
              ]);
            } finally {
              await adapter.disconnect(c);
            }
          }
        }
      });

      it('the first calls of a store with a deadline share one TIME, and one batch', async () => {
        const limiter = createLimiter({
          store: adapter.makeStore(client),
          policy: fixedWindow({ limit: 100, window: '1h' }),
          prefix: `time-${tag}`,
          onStoreError: 'throw',
          timeoutMs: 10_000,
        });
        const before = await commandCalls(server().port);
        await Promise.all(Array.from({ length: 20 }, (_, i) => limiter.limit(`u${i}`)));
        const after = await commandCalls(server().port);
        // One TIME sent by the store, one read by the batch script (not one per call).
        expect((after.time ?? 0) - (before.time ?? 0)).toBe(2);
        expect(delta(before, after).evalsha).toBe(1);
      });

      it('turns a closed client into STORE_UNAVAILABLE, and the limiter into its fallback', async () => {
        const own = await openClient(adapter, server().url);
        await adapter.disconnect(own);
        await expectStoreUnavailable(expect, adapter.makeStore(own), `closed-${tag}`);
      });

      it('rejects what is not a client, and bad options', async () => {
        expect(() => adapter.makeStore({} as C)).toThrow(FloodgateError);
        const c = adapter.create(server().url);
        try {
          expect(() => adapter.makeStore(c, { clock: 'local' as 'server' })).toThrow(/clock/);
          expect(() => adapter.makeStore(c, { now: 5 as unknown as () => number })).toThrow(/now/);
          for (const batch of ['yes', { maxCalls: 0 }, { maxCalls: 513 }, { max: 8 }]) {
            expect(() => adapter.makeStore(c, { batch: batch as never })).toThrow(/batch/);
          }
        } finally {
          await adapter.disconnect(c);
        }
      });

      it('is remote, and falls back to a fresh MemoryStore', async () => {
        const c = adapter.create(server().url);
        try {
          const store = adapter.makeStore(c);
          expect(store.remote).toBe(true);
          const a = store.fallback!();
          expect(a).toBeInstanceOf(options.fallback);
          expect(store.fallback!()).not.toBe(a);
        } finally {
          await adapter.disconnect(c);
        }
      });

      it('rejectIfNotReady fails at once while the client is not connected', async () => {
        const c = adapter.create(server().url);
        try {
          const call = storeCall(`nr-${tag}`, 'x', fixedWindow({ limit: 1, window: '1h' }));
          const strict = adapter.makeStore(c, { rejectIfNotReady: true });
          await expect(strict.evaluate(call)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
          const error = await strict.evaluate(call).then(String, (e: Error) => e.message);
          expect(error).toMatch(/not ready/);
          await adapter.connect(c);
          expect((await strict.evaluate(call))[0]!.allowed).toBe(true);
        } finally {
          await adapter.disconnect(c);
        }
      });
    });
  }
}
