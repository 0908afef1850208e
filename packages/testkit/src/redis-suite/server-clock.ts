import { createLimiter, type Limiter, slidingWindowLog, tokenBucket } from '@floodgate/core';
import { openClient, useRedisServer } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

/**
 * The two app servers' clients of `redisServerClockTests`.
 * @example
 * ```ts
 * import type { NodeRedisClient } from '@floodgate/node-redis';
 * import { type RedisServerClockTestsOptions, type RedisStoreAdapter, redisServerClockTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const REDIS_6: RedisStoreAdapter<NodeRedisClient>; // test/adapters.ts
 * declare const REDIS_4: RedisStoreAdapter<NodeRedisClient>;
 * // The old client an hour ahead of the new one: a rolling upgrade with clock skew.
 * const options: RedisServerClockTestsOptions<NodeRedisClient> = { adapters: [REDIS_6, REDIS_4] };
 * redisServerClockTests({ describe, it, expect, beforeAll, afterAll }, options);
 * ```
 */
export interface RedisServerClockTestsOptions<C> {
  /**
   * The two app servers' clients: the first on the real clock, the second an hour ahead. Two
   * different client generations make it a rolling upgrade too.
   */
  adapters: readonly [RedisStoreAdapter<C>, RedisStoreAdapter<C>];
}

// Two app servers whose clocks disagree by an hour, sharing one Redis.
const HOUR = 3_600_000;
const policies = [
  tokenBucket({ limit: 5, interval: '1h' }),
  slidingWindowLog({ limit: 8, window: '1h' }),
];

const summary = (d: { allowed: boolean; remaining: number }): string =>
  `${d.allowed}/${d.remaining}`;

/**
 * `clock: 'server'` gives callers whose clocks differ by an hour the decisions one clock gives;
 * `clock: 'client'` (the contrast) lets the skew bend the limit.
 * @example
 * A store package's whole `test/server-clock.test.ts`:
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisStoreAdapter, redisServerClockTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const IOREDIS: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts
 * redisServerClockTests({ describe, it, expect, beforeAll, afterAll }, { adapters: [IOREDIS, IOREDIS] });
 * ```
 */
export function redisServerClockTests<C>(
  api: RedisSuiteApi,
  options: RedisServerClockTestsOptions<C>,
): void {
  const { describe, it, expect, beforeAll, afterAll } = api;
  const server = useRedisServer(api);
  const [adapterA, adapterB] = options.adapters;
  let a: C;
  let b: C;
  beforeAll(async () => {
    a = await openClient(adapterA, server().url);
    b = await openClient(adapterB, server().url);
  });
  afterAll(async () => {
    if (a !== undefined) await adapterA.disconnect(a);
    if (b !== undefined) await adapterB.disconnect(b);
  });

  function pair(clock: 'server' | 'client', prefix: string): [Limiter, Limiter] {
    const make = (adapter: RedisStoreAdapter<C>, client: C, skew: number): Limiter =>
      createLimiter({
        store: adapter.makeStore(client, { clock, now: () => Date.now() + skew }),
        policy: policies,
        prefix,
        onStoreError: 'throw',
        blockCache: false,
      });
    return [make(adapterA, a, 0), make(adapterB, b, HOUR)];
  }

  describe('clock: server', () => {
    it('gives callers whose clocks differ by an hour the decisions one clock gives', async () => {
      const [early, late] = pair('server', 'skew-server');
      const [single] = pair('server', 'skew-single');
      const shared: string[] = [];
      const alone: string[] = [];
      for (let i = 0; i < 12; i++) {
        shared.push(summary(await (i % 2 === 0 ? early : late).limit('k')));
        alone.push(summary(await single.limit('k')));
      }
      expect(shared).toEqual(alone);
      expect(shared.filter((s) => s.startsWith('true'))).toHaveLength(5);
      // Retry times agree too: both ask the server how long until the next token.
      const [d1, d2] = [await early.limit('k'), await late.limit('k')];
      expect(Math.abs(d1.retryAfterMs - d2.retryAfterMs)).toBeLessThan(1000);
      expect(d1.retryAfterMs).toBeGreaterThan(HOUR / 5 - 60_000);
    });
  });

  describe('clock: client (the contrast)', () => {
    it('lets the caller an hour ahead see a refilled bucket: the skew bends the limit', async () => {
      const [early, late] = pair('client', 'skew-client');
      let admitted = 0;
      for (let i = 0; i < 6; i++) if ((await early.limit('k')).allowed) admitted++;
      for (let i = 0; i < 6; i++) if ((await late.limit('k')).allowed) admitted++;
      expect(admitted).toBe(10);
    });
  });
}
