import type { Store } from '@floodgate/core/store';
import type { StoreInspector } from '../conformance/types.js';
import { storeConformance } from '../conformance.js';
import { openClient, useRedisServer } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

/**
 * The adapters `redisConformance` runs the conformance suite for, and how hard it tries.
 * @example
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisConformanceOptions, type RedisStoreAdapter, redisConformance } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const IOREDIS_5: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts
 * declare const IOREDIS_6: RedisStoreAdapter<IoRedisClient>;
 * const options: RedisConformanceOptions<IoRedisClient> = { adapters: [IOREDIS_5, IOREDIS_6], numRuns: 10 };
 * redisConformance({ describe, it, expect, beforeAll, afterAll }, options);
 * ```
 * @public
 */
export interface RedisConformanceOptions<C> {
  /** The suite runs twice per adapter: `clock: 'client'` and `clock: 'server'`. */
  adapters: readonly RedisStoreAdapter<C>[];
  /** fast-check runs per random-trace property, in `clock: 'client'`. @default 25 */
  numRuns?: number;
  /**
   * Stretches the semantics table of the `clock: 'client'` run by this factor (its
   * `ConformanceOptions.semanticsScale`): for a client whose round trips can outlast the 50 ms the
   * table leaves before a key it needs expires on Redis's clock (over HTTP, say). A divisor of
   * 86 400. @default 1
   */
  semanticsScale?: number;
}

/**
 * The store's `TTL` and key listing through one of its own single-node clients (`PTTL`, `SCAN`),
 * with the slack real-time expiry needs: the inspector `storeConformance` takes.
 * @example
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { storeConformance } from '@floodgate/testkit';
 * import { type RedisStoreAdapter, redisInspector } from '@floodgate/testkit/redis';
 * import { describe, expect, it } from 'vitest';
 *
 * declare const IOREDIS: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts
 * declare const client: IoRedisClient; // a connected single-node client
 * const inspect = redisInspector(IOREDIS, () => client);
 * const makeStore = () => IOREDIS.makeStore(client); // clock: 'server'
 * storeConformance({ describe, it, expect }, { name: 'IoRedisStore', controlsTime: false, makeStore, inspect });
 * ```
 * @public
 */
export function redisInspector<C>(
  adapter: Pick<RedisStoreAdapter<C>, 'command'>,
  client: () => C,
): StoreInspector<Store> {
  return {
    async ttl(key: string): Promise<number | undefined> {
      const ttl = Number(await adapter.command(client(), ['PTTL', key]));
      return ttl === -2 ? undefined : ttl;
    },
    async keys(): Promise<string[]> {
      const out: string[] = [];
      let cursor = '0';
      do {
        const reply = (await adapter.command(client(), ['SCAN', cursor, 'COUNT', '1000'])) as [
          unknown,
          unknown[],
        ];
        cursor = String(reply[0]);
        out.push(...reply[1].map(String));
      } while (cursor !== '0');
      return out;
    },
    // Redis TTLs run on real time: allow for the round trips between decision and PTTL.
    ttlSlackMs: 1000,
  };
}

/**
 * `storeConformance` for a Redis store, on a throw-away server, for every adapter: once on the
 * suite's clock (`clock: 'client'`, stretched traces since `PX` runs on real time) and once on
 * the server's (`clock: 'server'`). Each adapter's client auto-pipelines where it can.
 * @example
 * A store package's whole `test/conformance.test.ts`:
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisStoreAdapter, redisConformance } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const IOREDIS: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts
 * redisConformance({ describe, it, expect, beforeAll, afterAll }, { adapters: [IOREDIS] });
 * ```
 * @public
 */
export function redisConformance<C>(api: RedisSuiteApi, options: RedisConformanceOptions<C>): void {
  const server = useRedisServer(api);
  const clients = new Map<string, C>();
  api.beforeAll(async () => {
    for (const adapter of options.adapters) {
      clients.set(adapter.name, await openClient(adapter, server().url, { autoPipelining: true }));
    }
  });
  api.afterAll(async () => {
    for (const adapter of options.adapters) {
      const client = clients.get(adapter.name);
      if (client !== undefined) await adapter.disconnect(client);
    }
  });

  for (const adapter of options.adapters) {
    const client = (): C => clients.get(adapter.name)!;
    const inspect = redisInspector(adapter, client);
    storeConformance(api, {
      name: `${adapter.name} (clock: client)`,
      makeStore: ({ now }) => adapter.makeStore(client(), { clock: 'client', now }),
      // PX runs on the server's real clock while the suite's clock stands still: stretched traces.
      realTimeExpiry: true,
      semanticsScale: options.semanticsScale,
      inspect,
      numRuns: options.numRuns ?? 25,
    });
    storeConformance(api, {
      name: `${adapter.name} (clock: server)`,
      controlsTime: false,
      makeStore: () => adapter.makeStore(client()),
      inspect,
    });
  }
}
