import {
  createLimiter,
  isFloodgateError,
  type Limiter,
  quota,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
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
 * @public
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
 * @public
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
        timeoutMs: 10_000, // semantics, not timeouts: generous on a loaded machine
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

  describe('clock: server, a quota', () => {
    // A whole-hour zone in which it is now between 03:00 and 04:00: hosts 12 hours behind or
    // ahead of Redis compute the period ends of another day, and Redis TIME must pick today's.
    const DAY = 24 * HOUR;
    const zoneAt3 = (): [string, number] => {
      let x = (3 - new Date().getUTCHours() + 24) % 24;
      if (x > 12) x -= 24;
      return [x === 0 ? 'UTC' : `Etc/GMT${x > 0 ? '-' : '+'}${Math.abs(x)}`, x * HOUR];
    };
    const limiter = (
      adapter: RedisStoreAdapter<C>,
      client: C,
      clock: 'server' | 'client',
      skew: number,
      policy: ReturnType<typeof quota>,
      prefix: string,
    ) =>
      createLimiter({
        store: adapter.makeStore(client, { clock, now: () => Date.now() + skew }),
        policy,
        prefix,
        onStoreError: 'throw',
        timeoutMs: 10_000, // semantics, not timeouts: generous on a loaded machine
        blockCache: false,
      });

    it('picks the period by Redis TIME: hosts a day apart share one count and one reset', async () => {
      const [timeZone, offset] = zoneAt3();
      const policy = quota({ limit: 3, per: 'day', timeZone });
      const behind = limiter(adapterA, a, 'server', -12 * HOUR, policy, 'quota-server');
      const ahead = limiter(adapterB, b, 'server', 12 * HOUR, policy, 'quota-server');
      const left = () => DAY - ((Date.now() + offset) % DAY); // to the next real local midnight
      const upper = left();
      const first = await behind.limit('k', { cost: 2 });
      const second = await ahead.limit('k');
      const lower = left();
      expect([first.allowed, first.remaining, second.allowed, second.remaining]).toEqual([
        true,
        1,
        true,
        0,
      ]);
      for (const d of [first, second]) {
        expect(d.resetAfterMs).toBeLessThanOrEqual(upper + 5000);
        expect(d.resetAfterMs).toBeGreaterThanOrEqual(lower - 5000);
      }
      const denied = await behind.limit('k');
      expect([denied.allowed, denied.retryAfterMs <= upper + 5000]).toEqual([false, true]);
      // The contrast: on its own clock, the host 12 hours behind counts in yesterday.
      const own = await limiter(adapterA, a, 'client', -12 * HOUR, policy, 'quota-client').limit(
        'k',
      );
      expect(Math.abs(own.resetAfterMs - (first.resetAfterMs - 12 * HOUR))).toBeLessThan(5000);
    });

    it('refuses, charging nothing, when Redis TIME is past every period end the host sent', async () => {
      const policy = quota({ limit: 3, per: 'day' });
      const stale = limiter(adapterA, a, 'server', -3 * DAY, policy, 'quota-stale');
      let error: unknown;
      try {
        await stale.limit('k');
      } catch (e) {
        error = e;
      }
      expect(isFloodgateError(error) && error.code).toBe('STORE_UNAVAILABLE');
      expect(String((error as Error).message)).toMatch(/clocks differ by more than a period/);
      const fine = limiter(adapterA, a, 'server', 0, policy, 'quota-stale');
      expect((await fine.peek('k')).remaining).toBe(3);
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
