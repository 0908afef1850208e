// What the batching suite checks call by call (it leaves those tests out for this adapter, which
// is not `ordered`), checked here without assuming an order between concurrent requests: over HTTP
// the lone call and the batch sent behind it may run in either order, on the real service as on
// the bridge.
import { fixedWindow, slidingWindow, tokenBucket } from '@floodgate/core';
import type { PolicyResult } from '@floodgate/core/store';
import {
  commandCalls,
  delta,
  keysFor,
  openClient,
  redisCommand,
  useRedisServer,
} from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BridgedClient, UPSTASH } from './adapters.js';

const server = useRedisServer({ beforeAll, afterAll });
const byNumber = (a: number, b: number) => a - b;

describe('UpstashStore batching, in whichever order concurrent requests run', () => {
  let client: BridgedClient;
  beforeAll(async () => {
    client = await openClient(UPSTASH, server().url);
  });
  afterAll(() => UPSTASH.disconnect(client));

  it('a call with nothing in flight goes alone; the calls made while it is out go as one request', async () => {
    const store = UPSTASH.makeStore(client, { batch: true });
    const policy = slidingWindow({ limit: 10, window: '1h' });
    const call = (identity: string) => {
      const keys = keysFor('lone', identity, [policy]);
      return store.evaluate({ keys, policies: [policy], cost: 1, mode: 'limit' });
    };
    await Promise.all([0, 1, 2].map(() => call('warm'))); // both scripts cached
    const before = await commandCalls(server().port);
    const requests = client.bridge!.requests.command;
    // The opener on 'seq', then six calls while it is out: three on 'seq', three on others.
    const results = await Promise.all([
      call('seq'),
      ...Array.from({ length: 6 }, (_, i) => call(i % 2 === 1 ? 'seq' : `b${i}`)),
    ]);
    const remaining = results.map(([r]) => r!.remaining);
    expect([0, 2, 4, 6].map((i) => remaining[i]!).sort(byNumber)).toEqual([6, 7, 8, 9]);
    expect([1, 3, 5].map((i) => remaining[i])).toEqual([9, 9, 9]);
    expect(delta(before, await commandCalls(server().port))).toEqual({ evalsha: 2 });
    expect(client.bridge!.requests.command - requests).toBe(2);
  });

  it('runs of identical calls on the server clock are answered as calls one after another', async () => {
    const store = UPSTASH.makeStore(client, { batch: true });
    const policies = [
      tokenBucket({ limit: 100, interval: '1h' }),
      fixedWindow({ limit: 50, window: '1h' }),
    ];
    const keys = keysFor('repeats', 'hot', policies);
    const wave = async (n: number) => {
      const results = await Promise.all(
        Array.from({ length: n }, () => store.evaluate({ keys, policies, cost: 1, mode: 'limit' })),
      );
      const view = (r: readonly PolicyResult[]) => [
        r[0]!.allowed && r[1]!.allowed,
        r[0]!.remaining,
        r[1]!.remaining,
      ];
      return results.map(view).sort((a, b) => Number(b[1]) - Number(a[1]));
    };
    // One alone and 39 as one run: 40 admissions, each with one unit less than the one before.
    expect(await wave(40)).toEqual(Array.from({ length: 40 }, (_, i) => [true, 99 - i, 49 - i]));
    // The window has 10 left: 10 admitted, 10 denied (a denial charges nothing).
    expect(await wave(20)).toEqual(
      [
        ...Array.from({ length: 10 }, (_, i) => [true, 59 - i, 9 - i]),
        ...Array.from({ length: 10 }, () => [false, 50, 0]),
      ].sort((a, b) => Number(b[1]) - Number(a[1])),
    );
  });

  it('a key written by a batch keeps the expiry of its last write', async () => {
    const store = UPSTASH.makeStore(client, { clock: 'client', now: () => 1_000_000, batch: true });
    const policies = [tokenBucket({ limit: 100, interval: '1h' })]; // 36 s a unit
    const keys = keysFor('ttl', 'hot', policies);
    const results = await Promise.all(
      Array.from({ length: 40 }, () => store.evaluate({ keys, policies, cost: 1, mode: 'limit' })),
    );
    const resets = results.map(([r]) => r!.resetAfterMs).sort(byNumber);
    expect(resets).toEqual(Array.from({ length: 40 }, (_, i) => (i + 1) * 36_000));
    // The last write's expiry, whichever of the two requests made it.
    const ttl = Number(await redisCommand(server().port, ['PTTL', keys[0]!]));
    expect(ttl).toBeGreaterThan(39 * 36_000);
    expect(ttl).toBeLessThanOrEqual(40 * 36_000);
  });
});
