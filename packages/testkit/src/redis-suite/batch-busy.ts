import { createLimiter, fixedWindow } from '@floodgate/core';
import { openClient } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

/** Busy-waits: the whole process, timers and sockets included, does nothing else meanwhile. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // spin
  }
}

/**
 * Calls queued for the next batch while this process is busy (a burst of thousands made in one
 * tick) go out only when it is done: their timeoutMs runs from then, as it runs from the moment
 * a call is sent (docs/failure-modes.md), and their callers wait as long. Before, such a batch
 * went out with deadlines already spent, and its script refused to charge: a whole batch to the
 * fallback, each a failure on the breaker's count (a ShardedStore over three Redis shards lost a
 * batch of 63 per shard in every burst of 12 000, and its breakers opened).
 */
export function busyBatchTests<C>(
  api: RedisSuiteApi,
  adapter: RedisStoreAdapter<C>,
  server: () => { url: string },
  tag: string,
): void {
  const { it, expect } = api;

  it('a batch queued while this process is busy past its deadlines is sent with its budget from then, and decided by Redis', async () => {
    const client = await openClient(adapter, server().url);
    try {
      const store = adapter.makeStore(client, { batch: true });
      const limiter = createLimiter({
        store,
        policy: fixedWindow({ limit: 100, window: '1h' }),
        prefix: `busy-${tag}`,
        timeoutMs: 100,
        blockCache: false,
        onStoreError: 'deny',
      });
      // Scripts loaded and the offset to Redis's clock known: nothing else to wait for.
      await limiter.limit('warm');
      await limiter.limit('warm');
      // The opener goes at once, alone; the ten made while it is in flight wait for the next
      // tick's batch, which comes only after this process is done being busy. (node-redis and
      // GLIDE write the opener only after the stall, its deadline spent: refused as late, it is
      // sent once more with its budget from the stall's end, lone.ts.)
      const opener = limiter.limit('opener');
      const queued = Array.from({ length: 10 }, (_, i) => limiter.limit(`queued${i}`));
      stall(250);
      const decided = await Promise.all(queued);
      expect(decided.map((d) => [d.reason, d.allowed, d.remaining])).toEqual(
        Array.from({ length: 10 }, () => [undefined, true, 99]),
      );
      const first = await opener;
      expect([first.reason, first.allowed, first.remaining]).toEqual([undefined, true, 99]);
      // What they charged is in Redis: each identity's next decision counts on from there.
      const again = await Promise.all([limiter.limit('queued0'), limiter.limit('opener')]);
      expect(again.map((d) => [d.reason, d.remaining])).toEqual([
        [undefined, 98],
        [undefined, 98],
      ]);
    } finally {
      await adapter.disconnect(client);
    }
  });

  // A store whose calls run one script each (`batch: false`, as every call on a Redis Cluster):
  // LONE_IN_FLIGHT (64) go on the wire, the rest wait for a place. Clients that write a command
  // on a later tick (node-redis, GLIDE) used to write the 64 after the stall with deadlines
  // spent (refused in Redis), and the waiting ones gave up at their deadlines, the store silent
  // while this process could neither ask it nor hear it: all 100 to the fallback.
  it('calls run one script each, made while this process is busy past their deadlines: sent with their budget from then, all decided by Redis', async () => {
    const client = await openClient(adapter, server().url);
    try {
      const store = adapter.makeStore(client, { batch: false });
      const limiter = createLimiter({
        store,
        policy: fixedWindow({ limit: 100, window: '1h' }),
        prefix: `busy-lone-${tag}`,
        timeoutMs: 100,
        blockCache: false,
        onStoreError: 'deny',
      });
      await limiter.limit('warm');
      await limiter.limit('warm');
      const made = Array.from({ length: 100 }, (_, i) => limiter.limit(`lone${i}`));
      stall(250);
      const decided = await Promise.all(made);
      expect(decided.filter((d) => d.reason !== undefined).map((d) => d.reason)).toEqual([]);
      expect(decided.every((d) => d.allowed && d.remaining === 99)).toBe(true);
      const again = await Promise.all([limiter.limit('lone0'), limiter.limit('lone99')]);
      expect(again.map((d) => [d.reason, d.remaining])).toEqual([
        [undefined, 98],
        [undefined, 98],
      ]);
    } finally {
      await adapter.disconnect(client);
    }
  });
}
