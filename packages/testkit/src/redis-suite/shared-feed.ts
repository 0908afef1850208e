// The change feed of the stores built on one client: one subscriber connection per client and
// channel, however many stores an app builds on it (often one per limiter), and each store's
// caches hear every change published on it.
import { createLimiter, fixedWindow } from '@floodgate/core';
import { keysFor } from '../redis-inspect.js';
import { redisCommand } from '../resp.js';
import { openClient, sleep, tagOf, useRedisServer } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

/**
 * The adapters `redisSharedFeedTests` runs: those whose client can subscribe (a change feed).
 * @example
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import type { RedisSharedFeedTestsOptions, RedisStoreAdapter } from '@floodgate/testkit/redis';
 *
 * declare const IOREDIS_5: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts
 * const options: RedisSharedFeedTestsOptions<IoRedisClient> = { adapters: [IOREDIS_5] };
 * ```
 * @public
 */
export interface RedisSharedFeedTestsOptions<C> {
  adapters: readonly RedisStoreAdapter<C>[];
}

const policy = fixedWindow({ limit: 1, window: '1h' });

/**
 * Four stores on one client, a limiter with a blocked-key cache on each: one subscriber on the
 * channel between them (`PUBSUB NUMSUB`), and a change published for each limiter's identity
 * drops that limiter's cached denial.
 * @example
 * A store package's whole `test/shared-feed.test.ts`:
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisStoreAdapter, redisSharedFeedTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const ADAPTERS: readonly RedisStoreAdapter<IoRedisClient>[]; // test/adapters.ts
 * redisSharedFeedTests({ describe, it, expect, beforeAll, afterAll }, { adapters: ADAPTERS });
 * ```
 * @public
 */
export function redisSharedFeedTests<C>(
  api: RedisSuiteApi,
  options: RedisSharedFeedTestsOptions<C>,
): void {
  const { describe, it, expect } = api;
  const server = useRedisServer(api);

  for (const adapter of options.adapters) {
    describe(`${adapter.name}: the change feed of the stores on one client`, () => {
      it('one subscriber connection between them, and every store hears each change', async () => {
        const tag = tagOf(adapter);
        const channel = `feed-${tag}`;
        const port = server().port;
        const client = await openClient(adapter, server().url);
        try {
          const prefixes = [0, 1, 2, 3].map((i) => `feed-${tag}-${i}`);
          const limiters = prefixes.map((prefix) =>
            createLimiter({
              store: adapter.makeStore(client, { changes: { channel } }),
              policy,
              prefix,
              // A cached denial is served for a minute unless a change heard drops it.
              blockCache: { maxStaleMs: 60_000 },
            }),
          );
          const subscribers = async () => {
            const reply = await redisCommand(port, ['PUBSUB', 'NUMSUB', channel]);
            return Number((reply as unknown[])[1]);
          };
          for (let waited = 0; (await subscribers()) === 0 && waited < 10_000; waited += 50) {
            await sleep(50);
          }
          await sleep(300); // time for any further subscriber to open, and the first to start
          expect(await subscribers()).toBe(1);
          // Cached once the feed is up (a feed that starts drops what was cached before it).
          for (const l of limiters) {
            await l.limit('u');
            expect((await l.limit('u')).allowed).toBe(false);
            expect((await l.limit('u')).reason).toBe('blocked-cache');
          }
          // Another process's reset of each limiter's identity: its keys gone, then announced.
          for (const prefix of prefixes) {
            await redisCommand(port, ['DEL', ...keysFor(prefix, 'u', [policy])]);
            await redisCommand(port, ['PUBLISH', channel, `${prefix}:{u}`]);
          }
          for (const l of limiters) {
            let d = await l.limit('u');
            for (let waited = 0; !d.allowed && waited < 5000; waited += 20) {
              await sleep(20);
              d = await l.limit('u');
            }
            expect(d.allowed).toBe(true);
          }
        } finally {
          await adapter.disconnect(client);
        }
      });
    });
  }
}
