// A reset seen everywhere at once: two app-server processes, A and B, on one Redis (or Cluster),
// the blocked-key cache on in both. A change B makes reaches A's cache through the store's change
// feed; with the feed down, A's cache serves a denial no longer than its bound.
import { type FaultProxy, startFaultProxy } from '../fault-proxy.js';
import { type RedisCluster, startRedisCluster } from '../redis-cluster.js';
import { type RedisServer, startRedisServer } from '../redis-server.js';
import { redisCommand } from '../resp.js';
import {
  BOUNDED_STALE_MS,
  forkInvalidationWorker,
  type InvalidationReply,
  type InvalidationWorker,
} from './invalidation-worker.js';
import { sleep } from './shared.js';
import type { RedisSuiteApi } from './types.js';

/**
 * Which worker script to fork, on which adapter, against what.
 * @example
 * ```ts
 * import { fileURLToPath } from 'node:url';
 * import type { RedisInvalidationTestsOptions } from '@floodgate/testkit/redis';
 *
 * const options: RedisInvalidationTestsOptions = {
 *   worker: fileURLToPath(new URL('./invalidation-worker.ts', import.meta.url)),
 *   adapter: 'IoRedisStore with ioredis 5',
 *   cluster: true,
 * };
 * ```
 * @public
 */
export interface RedisInvalidationTestsOptions {
  /** The package's worker script (absolute path): it calls `serveInvalidationWorker(adapters)`. */
  worker: string;
  /** The adapter both processes use (its `name`). */
  adapter: string;
  /**
   * On a 3-master Redis Cluster instead of one server (the adapter needs `createCluster`). The
   * channel-down test runs on one server only: it needs a proxy in front of A alone.
   * @default false
   */
  cluster?: boolean;
  /** Node flags for the workers. @default ['--import', 'tsx'] */
  execArgv?: readonly string[];
}

/** Fails the test with the worker's error instead of reading fields that are not there. */
function ok(reply: InvalidationReply): InvalidationReply {
  if (reply.error !== undefined) throw new Error(reply.error);
  return reply;
}

const quantile = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

/**
 * Process B resets (or refunds) an identity process A holds a cached denial of; once A heard of
 * it (through its store's change feed), A's next decision is made by Redis and admits. The time
 * from B's call resolving to A hearing of it is measured and printed. On one server, A reaches
 * Redis through a fault proxy: with A's subscriber killed and its reconnects refused, a reset
 * goes unheard and A's cache serves the stale denial at most `blockCache.maxStaleMs`.
 * @example
 * A store package's `test/invalidation.test.ts`:
 * ```ts
 * import { fileURLToPath } from 'node:url';
 * import { redisInvalidationTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * const worker = fileURLToPath(new URL('./invalidation-worker.ts', import.meta.url));
 * redisInvalidationTests({ describe, it, expect, beforeAll, afterAll }, {
 *   worker,
 *   adapter: 'IoRedisStore with ioredis 5',
 * });
 * ```
 * @public
 */
export function redisInvalidationTests(
  api: RedisSuiteApi,
  options: RedisInvalidationTestsOptions,
): void {
  const { describe, it, expect, beforeAll, afterAll } = api;
  const onCluster = options.cluster === true;
  let server: RedisServer | undefined;
  let cluster: RedisCluster | undefined;
  let proxy: FaultProxy | undefined;
  let a: InvalidationWorker;
  let b: InvalidationWorker;

  beforeAll(async () => {
    const execArgv = options.execArgv ?? ['--import', 'tsx'];
    const fork = (where: { url?: string; nodes?: readonly { host: string; port: number }[] }) =>
      forkInvalidationWorker(options.worker, { adapter: options.adapter, ...where }, execArgv);
    if (onCluster) {
      cluster = await startRedisCluster();
      const nodes = cluster.startupNodes;
      [a, b] = await Promise.all([fork({ nodes }), fork({ nodes })]);
    } else {
      server = await startRedisServer();
      proxy = await startFaultProxy({ target: server });
      [a, b] = await Promise.all([fork({ url: proxy.url }), fork({ url: server.url })]);
    }
    for (const w of [a, b]) ok(await w.ask({ type: 'feed', state: 'alive' }));
  }, 120_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await proxy?.close();
    await server?.stop();
    await cluster?.stop();
  }, 60_000);

  /** A denies `key` from Redis, then from its cache. */
  async function cachedDenialIn(limiter: 'window' | 'blocking' | 'bounded', key: string) {
    for (let i = 0; i < 2; i++)
      expect(ok(await a.ask({ type: 'limit', limiter, key })).allowed).toBe(true);
    const denied = ok(await a.ask({ type: 'limit', limiter, key }));
    expect([denied.allowed, denied.reason]).toEqual([false, undefined]);
    const cached = ok(await a.ask({ type: 'limit', limiter, key }));
    expect([cached.allowed, cached.reason]).toEqual([false, 'blocked-cache']);
    return denied;
  }

  /** B's call on `key`; once A heard of it, A's next decision comes from Redis and admits. */
  async function seenByA(
    limiter: 'window' | 'blocking' | 'bounded',
    key: string,
    call: 'reset' | 'refund',
  ): Promise<number> {
    const done = ok(await b.ask({ type: call, limiter, key }));
    const heard = ok(await a.ask({ type: 'heard', limiter, key, count: 1 }));
    const next = ok(await a.ask({ type: 'limit', limiter, key }));
    expect([next.allowed, next.reason]).toEqual([true, undefined]);
    return heard.at! - done.at!;
  }

  const where = onCluster ? 'a Redis Cluster' : 'one Redis';
  describe(`${options.adapter}: a change made by one process reaches the other's blocked-key cache (${where})`, () => {
    it('a reset in B is honoured by A at its next decision (20 resets, the delay printed)', async () => {
      const delays: number[] = [];
      for (let i = 0; i < 20; i++) {
        await cachedDenialIn('window', `w${i}`);
        delays.push(await seenByA('window', `w${i}`, 'reset'));
      }
      // Measured, not asserted (no test asserts a wall-clock time): B's reset resolving → A's
      // feed delivering it. Negative: A heard before B had its reply.
      // The first reset of a run is reported apart: it pays for warming both processes up.
      const f = (x: number) => `${x.toFixed(2)} ms`;
      const rest = delays.slice(1);
      console.log(
        `[invalidation] ${options.adapter} on ${where}: reset in B resolved → A's cache entry ` +
          `dropped: first ${f(delays[0]!)}; then median ${f(quantile(rest, 0.5))}, p90 ` +
          `${f(quantile(rest, 0.9))}, max ${f(Math.max(...rest))} (n=${rest.length})`,
      );
    }, 60_000);

    it("a blockFor: '1d' block lifted by B's reset is lifted in A too", async () => {
      const denied = await cachedDenialIn('blocking', 'abuser');
      expect(denied.retryAfterMs).toBeGreaterThan(3_600_000); // the block, not the window
      await seenByA('blocking', 'abuser', 'reset');
    }, 30_000);

    it('a refund in B of an identity at its limit drops the denial A cached', async () => {
      await cachedDenialIn('window', 'refunded');
      await seenByA('window', 'refunded', 'refund');
    }, 30_000);

    if (onCluster) return;

    it(`with A's feed down, A serves a stale denial at most maxStaleMs (${BOUNDED_STALE_MS} ms), then asks Redis`, async () => {
      const port = server!.port;
      const denied = await cachedDenialIn('bounded', 'stale');
      // A's subscriber is killed and cannot come back: the proxy in front of A refuses new
      // connections and keeps A's command connection. B (direct) resubscribes.
      proxy!.set('refuse');
      await redisCommand(port, ['CLIENT', 'KILL', 'TYPE', 'pubsub']);
      ok(await a.ask({ type: 'feed', state: 'down' }));
      ok(await b.ask({ type: 'reset', limiter: 'bounded', key: 'stale' }));
      // Within the bound, the stale denial is still served: the fallback is bounded, not gone.
      const early = ok(await a.ask({ type: 'limit', limiter: 'bounded', key: 'stale' }));
      if (early.at! - denied.at! < BOUNDED_STALE_MS - 100)
        expect(early.reason).toBe('blocked-cache');
      await sleep(BOUNDED_STALE_MS + 50);
      // A never heard of the reset, and yet past the bound it asks Redis, which admits.
      const unheard = await a.ask({
        type: 'heard',
        limiter: 'bounded',
        key: 'stale',
        count: 1,
        withinMs: 0,
      });
      expect(unheard.error).toBe('not heard');
      const late = ok(await a.ask({ type: 'limit', limiter: 'bounded', key: 'stale' }));
      expect([late.allowed, late.reason]).toEqual([true, undefined]);
      // Healed: A subscribes again (its cache starts over, it may have missed changes) and
      // hears B's resets at once again.
      proxy!.set('none');
      ok(await a.ask({ type: 'feed', state: 'alive' }));
      await cachedDenialIn('bounded', 'back');
      await seenByA('bounded', 'back', 'reset');
    }, 60_000);
  });
}
