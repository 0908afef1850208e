import { createLimiter, fixedWindow, type Limiter } from '@floodgate/core';
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

  /**
   * `test` with a limiter of 100 an hour on a store of its own client (closed after it): a
   * decision that misses its deadline is a denial with a reason (`onStoreError: 'deny'`).
   */
  async function withLimiter(
    batch: boolean,
    prefix: string,
    timeoutMs: number,
    test: (limiter: Limiter) => Promise<void>,
  ): Promise<void> {
    const client = await openClient(adapter, server().url);
    try {
      const limiter = createLimiter({
        store: adapter.makeStore(client, { batch }),
        policy: fixedWindow({ limit: 100, window: '1h' }),
        prefix: `${prefix}-${tag}`,
        timeoutMs,
        blockCache: false,
        onStoreError: 'deny',
      });
      await test(limiter);
    } finally {
      await adapter.disconnect(client);
    }
  }

  it('a batch queued while this process is busy past its deadlines is sent with its budget from then, and decided by Redis', async () => {
    await withLimiter(true, 'busy', 100, async (limiter) => {
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
    });
  });

  // A fresh store learns Redis's clock from its first `TIME`; read late, behind a busy process,
  // that reply reads the clock low by the wait, and every deadline sent on it falls early: the
  // calls made after the stall reached Redis in time and were refused as late. Refused, a call
  // charged nothing, and its caller still waits: it is sent once more, on the offset the
  // refusal's own `TIME` taught (store.ts `#again`). Batched and one script each.
  for (const batch of [true, false]) {
    it(`calls sent on a clock offset learnt from a reply read late are refused as late, and sent once more (batch: ${batch})`, async () => {
      await withLimiter(batch, `busy-offset-${batch}`, 100, async (limiter) => {
        // The first decision sends the store's first TIME; its caller gives up while this
        // process is busy (it waited past its deadline), the calls made after it do not.
        const first = limiter.limit('first');
        stall(250);
        const after = Array.from({ length: 10 }, (_, i) => limiter.limit(`after${i}`));
        const decided = await Promise.all(after);
        expect(decided.map((d) => [d.reason, d.allowed, d.remaining])).toEqual(
          Array.from({ length: 10 }, () => [undefined, true, 99]),
        );
        await first;
        const again = await limiter.limit('after0');
        expect([again.reason, again.remaining]).toEqual([undefined, 98]);
      });
    });
  }

  // A fresh store's first decisions wait for its first `TIME`. Made early in a loop longer than
  // their timeoutMs, they used to give up at their own deadlines, before this process could have
  // read the store's answer: every one to the fallback. Their wait now counts from the store's
  // last answer, or from the end of the tick that asked it, as a held call's does.
  for (const batch of [true, false]) {
    it(`a fresh store's first decisions, made while this process is busy past their deadlines, are decided by Redis (batch: ${batch})`, async () => {
      await withLimiter(batch, `busy-fresh-${batch}`, 1_000, async (limiter) => {
        const made = Array.from({ length: 100 }, (_, i) => limiter.limit(`fresh${i}`));
        stall(1_150);
        const decided = await Promise.all(made);
        expect(decided.filter((d) => d.reason !== undefined).map((d) => d.reason)).toEqual([]);
        expect(decided.every((d) => d.allowed && d.remaining === 99)).toBe(true);
        const again = await limiter.limit('fresh0');
        expect([again.reason, again.remaining]).toEqual([undefined, 98]);
      });
    });
  }

  // A store whose calls run one script each (`batch: false`, as every call on a Redis Cluster):
  // LONE_IN_FLIGHT (64) go on the wire, the rest wait for a place. Clients that write a command
  // on a later tick (node-redis, GLIDE) used to write the 64 after the stall with deadlines
  // spent (refused in Redis), and the waiting ones gave up at their deadlines, the store silent
  // while this process could neither ask it nor hear it: all 100 to the fallback.
  it('calls run one script each, made while this process is busy past their deadlines: sent with their budget from then, all decided by Redis', async () => {
    // timeoutMs 1 000: over HTTP (UpstashStore's suite) the REST bridge runs in this process
    // and serves the 64 requests sent at once one after another, ~5 ms each here: with 250 ms,
    // the last ones passed their deadline in this process, not in the store.
    await withLimiter(false, 'busy-lone', 1_000, async (limiter) => {
      await limiter.limit('warm');
      await limiter.limit('warm');
      const made = Array.from({ length: 100 }, (_, i) => limiter.limit(`lone${i}`));
      stall(1_150);
      const decided = await Promise.all(made);
      expect(decided.filter((d) => d.reason !== undefined).map((d) => d.reason)).toEqual([]);
      expect(decided.every((d) => d.allowed && d.remaining === 99)).toBe(true);
      const again = await Promise.all([limiter.limit('lone0'), limiter.limit('lone99')]);
      expect(again.map((d) => [d.reason, d.remaining])).toEqual([
        [undefined, 98],
        [undefined, 98],
      ]);
    });
  });
}
