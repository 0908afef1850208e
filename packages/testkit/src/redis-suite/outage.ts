import { createLimiter, type Decision, tokenBucket } from '@floodgate/core';
import type { Store } from '@floodgate/core/store';
import { freePort, type RedisServer, startRedisServer } from '../redis-server.js';
import { sleep } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

// Upper bounds, far above the 250 ms default deadline so a loaded machine does not fail them,
// and far below what a client's own queueing costs (ioredis: over a minute per command).
const DECISION_BOUND_MS = 2_000;
const BREAKER_BOUND_MS = 6_000;
/** A decision still pending after this long is recorded as hung, and the test fails. */
const HUNG_MS = 5_000;

interface Run {
  /** Each decision, or 'hung'. */
  decisions: (Decision | 'hung')[];
  /** The slowest decision in ms. */
  slowestMs: number;
  /** ms from the first decision until the breaker opened; undefined if it did not. */
  openedAfterMs: number | undefined;
}

/**
 * A limiter with default options on `store` (its timeout, breaker and fallback are the defaults
 * under test), with a breaker hook that notes when it first opened.
 */
function watchedLimiter(store: Store, prefix: string) {
  let openedAt: number | undefined;
  const limiter = createLimiter({
    store,
    policy: tokenBucket({ limit: 3, interval: '1h' }), // no window seam mid-test
    prefix,
    blockCache: false,
    breaker: {
      onStateChange: (state) => {
        if (state === 'open') openedAt ??= performance.now();
      },
    },
  });
  /** Eight decisions in a row on one identity, each bounded by `HUNG_MS`. */
  async function run(): Promise<Run> {
    const start = performance.now();
    const decisions: (Decision | 'hung')[] = [];
    let slowestMs = 0;
    for (let i = 0; i < 8; i++) {
      const t0 = performance.now();
      const d = await Promise.race([
        limiter.limit('k'),
        sleep(HUNG_MS).then(() => 'hung' as const),
      ]);
      slowestMs = Math.max(slowestMs, performance.now() - t0);
      decisions.push(d);
      if (d === 'hung') break;
    }
    const openedAfterMs = openedAt === undefined ? undefined : openedAt - start;
    return { decisions, slowestMs, openedAfterMs };
  }
  return { limiter, run };
}

/**
 * An outage seen through a limiter with default options and a client with its default
 * reconnection (a server paused with SIGSTOP, a server killed, a server down before the process
 * started): no decision waits for the client's own queueing, the breaker opens within seconds,
 * and the in-process fallback decides (3 of 3 admitted, then denied). Registered by
 * `redisFaultTests` for each adapter.
 */
export function redisOutageTests<C>(
  api: RedisSuiteApi,
  adapter: RedisStoreAdapter<C>,
  tag: string,
): void {
  const { it, expect } = api;

  const expectBounded = (run: Run) => {
    expect(run.decisions.includes('hung')).toBe(false);
    expect(run.slowestMs).toBeLessThan(DECISION_BOUND_MS);
    expect(run.openedAfterMs).toBeDefined();
    expect(run.openedAfterMs!).toBeLessThan(BREAKER_BOUND_MS);
    const ds = run.decisions as Decision[];
    // Every decision came from the fallback, which counts on its own: 3 of limit 3, then none.
    expect(ds.every((d) => d.reason === 'store-timeout' || d.reason === 'store-unavailable')).toBe(
      true,
    );
    expect(ds.map((d) => d.allowed)).toEqual([true, true, true, false, false, false, false, false]);
  };

  for (const fault of ['SIGSTOP', 'kill'] as const) {
    it(`a server ${fault === 'SIGSTOP' ? 'paused (SIGSTOP)' : 'killed'} mid-run: decisions bounded by the default deadline, breaker open within seconds, fallback decides`, async () => {
      const own: RedisServer = await startRedisServer();
      const client = adapter.create(own.url); // the client's own reconnection and queueing
      await adapter.connect(client);
      let paused = false;
      try {
        const { limiter, run } = watchedLimiter(adapter.makeStore(client), `out-${fault}-${tag}`);
        expect((await limiter.limit('before')).reason).toBeUndefined();
        if (fault === 'SIGSTOP') {
          process.kill(own.pid, 'SIGSTOP');
          paused = true;
        } else {
          await own.stop();
        }
        expectBounded(await run());
        if (fault === 'SIGSTOP') {
          process.kill(own.pid, 'SIGCONT');
          paused = false;
          // Once the server answers again, a probe closes the breaker and Redis decides.
          const until = performance.now() + 10_000;
          let back = await limiter.limit('after');
          while (back.reason !== undefined && performance.now() < until) {
            await sleep(100);
            back = await limiter.limit('after');
          }
          expect(back.reason).toBeUndefined();
        }
      } finally {
        if (paused) process.kill(own.pid, 'SIGCONT');
        await adapter.disconnect(client);
        await own.stop();
      }
    }, 30_000);
  }

  it('a reply read late behind a busy event loop is taken, and later scripts are not refused as late (default deadline)', async () => {
    const own = await startRedisServer();
    const client = adapter.create(own.url);
    await adapter.connect(client);
    try {
      const limiter = createLimiter({
        store: adapter.makeStore(client, { batch: false }),
        policy: tokenBucket({ limit: 100, interval: '1h' }), // no window seam mid-test
        prefix: `busy-${tag}`,
        blockCache: false,
      });
      expect((await limiter.limit('k')).reason).toBeUndefined(); // the store learns Redis's clock
      // The command goes out, Redis answers at once, and this process is busy for 400 ms (a long
      // GC, CPU-bound work) before it reads the reply: the 250 ms timer is overdue by then.
      const slow = limiter.limit('k');
      setImmediate(() => {
        const end = performance.now() + 400;
        while (performance.now() < end) {}
      });
      const ds = [await slow];
      for (let i = 0; i < 3; i++) ds.push(await limiter.limit('k'));
      expect(ds.map((d) => [d.reason, d.remaining])).toEqual([
        [undefined, 98],
        [undefined, 97],
        [undefined, 96],
        [undefined, 95],
      ]);
    } finally {
      await adapter.disconnect(client);
      await own.stop();
    }
  });

  it('a server down when the process starts: the first decisions are bounded, breaker open within seconds, fallback decides', async () => {
    const client = adapter.create(`redis://127.0.0.1:${await freePort()}`); // nothing listens
    // Connecting as an app does at start-up, without waiting for it (it may never succeed).
    adapter.connect(client).catch(() => {});
    try {
      const { run } = watchedLimiter(adapter.makeStore(client), `out-start-${tag}`);
      expectBounded(await run());
    } finally {
      await adapter.disconnect(client);
    }
  }, 30_000);
}
