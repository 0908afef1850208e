import { isFloodgateError, tokenBucket } from '@floodgate/core';
import { encodeIdentity, policyKey, type StoreCall } from '@floodgate/core/store';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeStore } from './helpers/bridge-store.js';
import { fixtureWorker, startWorkerd } from './helpers/workerd.js';

// What a Worker sees when the objects cannot decide, and when a call reaches its object after
// the caller stopped waiting. Both in workerd, on real objects.
let good: { mf: Miniflare; url: URL };
let broken: { mf: Miniflare; url: URL };

beforeAll(async () => {
  good = await startWorkerd([await fixtureWorker('test/fixtures/bridge-worker.ts')]);
  // The class bound without SQLite storage (a migration under new_classes): every call fails.
  const kv = await fixtureWorker('test/fixtures/bridge-worker.ts', {
    durableObjects: { FLOODGATE: { className: 'FloodgateObject', useSQLite: false } },
  });
  broken = await startWorkerd([kv]);
}, 60_000);

afterAll(async () => {
  await good?.mf.dispose();
  await broken?.mf.dispose();
});

async function codeOf(work: Promise<unknown>): Promise<string | undefined> {
  try {
    await work;
  } catch (error) {
    return isFloodgateError(error) ? error.code : String(error);
  }
  return undefined;
}

describe('DurableObjectStore when the object fails', () => {
  it("a failing object is STORE_UNAVAILABLE, and the limiter decides on the store's fallback", async () => {
    const store = new BridgeStore({ url: broken.url });
    const policy = tokenBucket({ limit: 3, interval: '1h' });
    const key = policyKey('f', encodeIdentity('u'), policy.id);
    const call: StoreCall = { keys: [key], policies: [policy], cost: 1, mode: 'limit' };
    expect(await codeOf(store.evaluate(call))).toBe('STORE_UNAVAILABLE');

    // A limiter made in the Worker, on its defaults: the in-isolate MemoryStore holds the limit.
    const decisions = [];
    for (let i = 0; i < 4; i++) decisions.push(await store.limitHere(3, 'u'));
    expect(decisions.map((d) => [d.allowed, d.remaining, d.reason])).toEqual([
      [true, 2, 'store-unavailable'],
      [true, 1, 'store-unavailable'],
      [true, 0, 'store-unavailable'],
      [false, 0, 'store-unavailable'],
    ]);
    const reported = decisions[0]!.errors[0]!;
    expect(reported.startsWith('STORE_UNAVAILABLE'), reported).toBe(true);
    expect(reported, 'the cause names the fix').toContain('new_sqlite_classes');
  });
});

describe('DurableObjectStore deadlines', () => {
  const policy = tokenBucket({ limit: 5, interval: '1h' });

  it('a decision reaching its object after the deadline charges nothing: STORE_TIMEOUT', async () => {
    const store = new BridgeStore({ url: good.url });
    const key = policyKey('late', encodeIdentity('u'), policy.id);
    const call = (deadline: number): StoreCall => ({
      keys: [key],
      policies: [policy],
      cost: 2,
      mode: 'limit',
      deadline,
    });
    expect(await codeOf(store.evaluate(call(performance.now() - 1)))).toBe('STORE_TIMEOUT');
    expect(await store.ttl(key), 'nothing written').toBe(undefined);
    const [r] = await store.evaluate(call(performance.now() + 30_000));
    expect([r!.allowed, r!.remaining], 'in time: charged').toEqual([true, 3]);
    // A peek writes nothing, so it has no deadline to miss.
    const peek: StoreCall = { ...call(performance.now() - 1), mode: 'peek' };
    expect((await store.evaluate(peek))[0]!.remaining).toBe(3);
  });

  it('a lease request reaching its object after the deadline holds no slot: STORE_TIMEOUT', async () => {
    const store = new BridgeStore({ url: good.url });
    const key = 'late:{v}:concurrency';
    const request = { key, id: 'a', cost: 1, limit: 1, leaseMs: 60_000 };
    expect(await codeOf(store.acquireLease({ ...request, deadline: performance.now() - 1 }))).toBe(
      'STORE_TIMEOUT',
    );
    expect(await store.ttl(key), 'nothing written').toBe(undefined);
    const grant = await store.acquireLease({
      ...request,
      id: 'b',
      deadline: performance.now() + 30_000,
    });
    expect(grant).toEqual({ allowed: true, remaining: 0, retryAfterMs: 0 });
  });
});
