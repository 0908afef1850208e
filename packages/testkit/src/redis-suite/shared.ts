import { createLimiter, type FloodgateError, fixedWindow, type Policy } from '@floodgate/core';
import type { Store, StoreCall } from '@floodgate/core/store';
import { keysFor } from '../redis-inspect.js';
import { type RedisServer, startRedisServer } from '../redis-server.js';
import type { RedisClientOptions, RedisStoreAdapter, RedisSuiteApi } from './types.js';

/**
 * Starts a throw-away `redis-server` before the tests of the enclosing `describe` (or file) and
 * stops it after them; the getter returns it once `beforeAll` has run.
 * @example
 * ```ts
 * import { redisCommand, useRedisServer } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * describe('my store', () => {
 *   const server = useRedisServer({ beforeAll, afterAll });
 *   it('has a redis-server of its own', async () => {
 *     expect(await redisCommand(server().port, ['DBSIZE'])).toBe(0);
 *   });
 * });
 * ```
 * @public
 */
export function useRedisServer(
  api: Pick<RedisSuiteApi, 'beforeAll' | 'afterAll'>,
): () => RedisServer {
  let server: RedisServer | undefined;
  api.beforeAll(async () => {
    server = await startRedisServer();
  });
  api.afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (server === undefined) throw new Error('useRedisServer: the server is not started yet');
    return server;
  };
}

/**
 * A connected client of `adapter` for `url`: `adapter.create`, then `adapter.connect`.
 * @example
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { openClient, type RedisServer, type RedisStoreAdapter } from '@floodgate/testkit/redis';
 *
 * declare const IOREDIS: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts
 * declare const server: RedisServer;
 * const client = await openClient(IOREDIS, server.url, { autoPipelining: true });
 * const store = IOREDIS.makeStore(client, { clock: 'server' });
 * await IOREDIS.disconnect(client);
 * ```
 * @public
 */
export async function openClient<C>(
  adapter: RedisStoreAdapter<C>,
  url: string,
  options?: RedisClientOptions,
): Promise<C> {
  const client = adapter.create(url, options);
  await adapter.connect(client);
  return client;
}

/**
 * A store on a client clock the trace moves (`clock.now`, ms), for a differential trace run
 * batched and one call per script run: `call(i, …)` decides `combos[i]` for the identity `hot`
 * under `${prefix}-${i}`; `keysOf[i]` are its keys.
 * @example
 * ```ts
 * const { client, clock, call } = await clientClockTrace(adapter, server().url, 'p', COMBOS, true);
 * clock.now += 1000;
 * await call(0, 'limit', 1);
 * await adapter.disconnect(client);
 * ```
 */
export async function clientClockTrace<C>(
  adapter: RedisStoreAdapter<C>,
  url: string,
  prefix: string,
  combos: readonly (readonly Policy[])[],
  batch: boolean,
) {
  const client = await openClient(adapter, url);
  const clock = { now: 1_700_000_000_000 };
  const store = adapter.makeStore(client, { clock: 'client', now: () => clock.now, batch });
  const keysOf = combos.map((policies, i) => keysFor(`${prefix}-${i}`, 'hot', policies));
  const call = (i: number, mode: StoreCall['mode'], cost: number, deadline?: number) =>
    store.evaluate({
      keys: keysOf[i]!,
      policies: combos[i]!,
      cost,
      mode,
      ...(deadline === undefined ? {} : { deadline }),
    });
  return { client, clock, keysOf, call };
}

/** The adapter's name as a key-prefix fragment: letters and digits only. */
export const tagOf = (adapter: { name: string }): string => adapter.name.replace(/\W+/g, '');

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A one-policy `limit` call on `identity`'s key under `prefix`, straight to a store. */
export function storeCall(prefix: string, identity: string, policy: Policy): StoreCall {
  return {
    keys: keysFor(prefix, identity, [policy]),
    policies: [policy],
    cost: 1,
    mode: 'limit' as const,
  };
}

/**
 * `store` fails both calls with `STORE_UNAVAILABLE`, and a limiter on it decides with its
 * fallback (`limit: 1`: admitted, then denied, both `reason: 'store-unavailable'`), telling
 * `onError` each time. `prefix` keeps the keys apart from other tests'.
 * @example
 * ```ts
 * import { IoRedisStore } from '@floodgate/ioredis';
 * import { expectStoreUnavailable, freePort } from '@floodgate/testkit/redis';
 * import { Redis } from 'ioredis';
 * import { expect, it } from 'vitest';
 *
 * it('turns a refused connection into STORE_UNAVAILABLE and the fallback', async () => {
 *   const redis = new Redis(await freePort(), '127.0.0.1', { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
 *   redis.on('error', () => {});
 *   await expectStoreUnavailable(expect, new IoRedisStore(redis), 'refused');
 *   redis.disconnect();
 * });
 * ```
 * @public
 */
export async function expectStoreUnavailable(
  expect: RedisSuiteApi['expect'],
  store: Store,
  prefix: string,
): Promise<void> {
  const policy = fixedWindow({ limit: 1, window: '1h' });
  const call = storeCall(prefix, 'x', policy);
  await expect(store.evaluate(call)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  await expect(store.reset(call.keys)).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
  const errors: FloodgateError[] = [];
  const limiter = createLimiter({ store, policy, prefix, onError: (e) => errors.push(e) });
  const d1 = await limiter.limit('x');
  const d2 = await limiter.limit('x');
  expect([d1.allowed, d1.reason, d2.allowed, d2.reason]).toEqual([
    true,
    'store-unavailable',
    false,
    'store-unavailable',
  ]);
  expect(errors.map((e) => e.code)).toEqual(['STORE_UNAVAILABLE', 'STORE_UNAVAILABLE']);
}
