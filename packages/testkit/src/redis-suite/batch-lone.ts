import { slidingWindow } from '@floodgate/core';
import { scriptForKinds } from '@floodgate/core/redis';
import { commandCalls, delta } from '../redis-inspect.js';
import { redisCommand } from '../resp.js';
import { openClient, storeCall } from './shared.js';
import type { RedisStoreAdapter, RedisSuiteApi } from './types.js';

/** How many scripts the server has cached (`INFO memory`): which scripts ran since a flush. */
async function cachedScripts(port: number): Promise<number> {
  const info = String(await redisCommand(port, ['INFO', 'memory']));
  return Number(/^number_of_cached_scripts:(\d+)/m.exec(info)?.[1]);
}

/**
 * When the store batches: a call made while none of its script runs is in flight goes at once,
 * alone, through the plain script; the calls made while one is in flight go together as one run
 * of the batch script (for an `ordered` adapter: after the lone call); and the callers one
 * batch's reply woke, calling again at once, go together.
 */
export function loneCallTests<C>(
  api: RedisSuiteApi,
  adapter: RedisStoreAdapter<C>,
  server: () => { url: string; port: number },
  tag: string,
): void {
  const { it, expect } = api;
  const policy = slidingWindow({ limit: 10, window: '1h' });
  const remainingOf = (results: readonly (readonly { remaining: number }[])[]) =>
    results.map(([r]) => r!.remaining);

  // Its remaining counts take the opener to run before the batch sent behind it, on the same key:
  // so only on a transport that keeps the order of concurrent commands.
  if (adapter.ordered !== false)
    it('a call with no run in flight runs the plain script alone; calls made while one is in flight go as one batch', async () => {
      const client = await openClient(adapter, server().url);
      try {
        const store = adapter.makeStore(client, { batch: true });
        const prefix = `lone-${tag}`;
        const port = server().port;
        const call = (identity: string) => store.evaluate(storeCall(prefix, identity, policy));
        // An empty script cache: what the server caches afterwards shows which scripts ran.
        await redisCommand(port, ['SCRIPT', 'FLUSH']);
        let before = await commandCalls(port);
        const seq = [];
        for (let i = 0; i < 3; i++) seq.push(await call('seq'));
        expect(remainingOf(seq)).toEqual([9, 8, 7]);
        // One EVALSHA each (the first, NOSCRIPT, loads the script with EVAL), all of the plain
        // script: under the old rule too, but each a tick later.
        expect(delta(before, await commandCalls(port))).toEqual({ evalsha: 3, eval: 1 });
        const plain = scriptForKinds(['slidingWindow']).sha1;
        expect(await redisCommand(port, ['SCRIPT', 'EXISTS', plain])).toEqual([1]);
        expect(await cachedScripts(port)).toBe(1);

        // The opener goes alone; the six calls made while it is in flight go as one batch run,
        // after it (three of them on the opener's key).
        before = await commandCalls(port);
        const results = await Promise.all([
          call('seq'),
          ...Array.from({ length: 6 }, (_, i) => call(i % 2 === 1 ? 'seq' : `b${i}`)),
        ]);
        expect(remainingOf(results)).toEqual([6, 9, 5, 9, 4, 9, 3]);
        // The batch script's EVALSHA met NOSCRIPT and was loaded with EVAL: one run for six calls.
        expect(delta(before, await commandCalls(port))).toEqual({ evalsha: 2, eval: 1 });
        expect(await cachedScripts(port)).toBe(2);
      } finally {
        await adapter.disconnect(client);
      }
    });

  it('the callers one batch answered, calling again at once, go together: no lone call splits them', async () => {
    const client = await openClient(adapter, server().url);
    try {
      const store = adapter.makeStore(client, { batch: true });
      const prefix = `woken-${tag}`;
      const call = (identity: string) => store.evaluate(storeCall(prefix, identity, policy));
      // Both scripts loaded: the first of three alone, the other two as a batch.
      await Promise.all([0, 1, 2].map(() => call('warm')));
      const before = await commandCalls(server().port);
      // The opener first: it goes alone, and the five made while it is in flight go together.
      const opener = call('opener');
      const pairs = Array.from({ length: 5 }, (_, i) =>
        call(`w${i}`).then(async (first) => [first, await call(`w${i}`)]),
      );
      expect((await opener)[0]!.remaining).toBe(9);
      const woken = await Promise.all(pairs);
      expect(woken.map(remainingOf)).toEqual(Array.from({ length: 5 }, () => [9, 8]));
      // The opener, the five made while it was in flight, and the five their reply woke: with
      // nothing in flight then, the first of those would otherwise have gone alone (four runs).
      expect(delta(before, await commandCalls(server().port))).toEqual({ evalsha: 3 });
    } finally {
      await adapter.disconnect(client);
    }
  });
}
