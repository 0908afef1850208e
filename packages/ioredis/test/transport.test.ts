// RedisStore over a hand-written RedisTransport, as the author of a store for another client
// would write one (here on an ioredis connection to a real redis-server): what the store decides
// from the transport, and when.
import { fixedWindow, isFloodgateError } from '@floodgate/core';
import { RedisStore, type RedisStoreOptions, type RedisTransport } from '@floodgate/core/redis';
import { commandCalls, delta, useRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const server = useRedisServer({ beforeAll, afterAll });
let redis: Redis;
beforeAll(async () => {
  redis = new Redis(server().url, { lazyConnect: true });
  await redis.connect();
});
afterAll(() => redis.disconnect());

/** A transport without strict mode; `canBatch` counts how often the store reads it. */
function transport(canBatch: boolean) {
  let reads = 0;
  const t = {
    label: 'hand-made',
    get canBatch() {
      reads++;
      return canBatch;
    },
    set canBatch(value: boolean) {
      canBatch = value;
    },
    send: (_firstKey: string, name: string, args: string[]) => redis.call(name, args),
    isReady: () => redis.status === 'ready',
  } satisfies RedisTransport & { canBatch: boolean };
  return { t, reads: () => reads };
}

const policy = fixedWindow({ limit: 100, window: '1h' });
let n = 0;
const call = (identity: string) => ({
  keys: [`tr-${n}:{${identity}}:${policy.id}`],
  policies: [policy],
  cost: 1,
  mode: 'limit' as const,
});

/** How many EVALSHA twelve calls of one tick take. */
async function evalshas(t: RedisTransport, options: RedisStoreOptions): Promise<number> {
  n++;
  const store = new RedisStore(t, options);
  // Both scripts loaded first: the calls under test are EVALSHA only.
  await store.evaluate(call('warm'));
  await Promise.all([store.evaluate(call('warm')), store.evaluate(call('warm'))]);
  const before = await commandCalls(server().port);
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => store.evaluate(call(`id${i}`))),
  );
  expect(results.every((r) => r[0]!.allowed && r[0]!.remaining === 99)).toBe(true);
  return delta(before, await commandCalls(server().port)).evalsha ?? 0;
}

describe('RedisStore over a RedisTransport', () => {
  it('refuses replicas (strict mode) when the transport has no sendWithWait, when built', () => {
    let error: unknown;
    try {
      new RedisStore(transport(true).t, { replicas: { count: 1, timeoutMs: 50 } });
    } catch (e) {
      error = e;
    }
    expect(isFloodgateError(error) && error.code).toBe('INVALID_OPTION');
    expect((error as Error).message).toMatch(/^hand-made: replicas/);
    // The same transport with sendWithWait takes it.
    const strict: RedisTransport = {
      ...transport(true).t,
      canBatch: true,
      sendWithWait: () => Promise.reject(new Error('not sent in this test')),
    };
    expect(() => new RedisStore(strict, { replicas: { count: 1, timeoutMs: 50 } })).not.toThrow();
  });

  it('batches the calls of one tick when the transport can and batch is on', async () => {
    expect(await evalshas(transport(true).t, {})).toBe(1);
    expect(await evalshas(transport(true).t, { batch: { maxCalls: 4 } })).toBe(3);
  });

  it('runs each call alone with batch: false, or when the transport cannot batch', async () => {
    expect(await evalshas(transport(true).t, { batch: false })).toBe(12);
    expect(await evalshas(transport(false).t, { batch: true })).toBe(12);
  });

  it('reads canBatch once, when built: what it says later changes nothing', async () => {
    const on = transport(true);
    const store = new RedisStore(on.t, {});
    expect(on.reads()).toBe(1);
    on.t.canBatch = false;
    await store.evaluate(call('x'));
    expect(on.reads()).toBe(1);
    expect(await evalshas(on.t, {})).toBe(12); // a store built now reads false
    const off = transport(false);
    const later = new RedisStore(off.t, {});
    off.t.canBatch = true;
    n++;
    const before = await commandCalls(server().port);
    await later.evaluate(call('warm'));
    await Promise.all(Array.from({ length: 6 }, (_, i) => later.evaluate(call(`id${i}`))));
    expect(delta(before, await commandCalls(server().port)).evalsha).toBe(7);
    expect(off.reads()).toBe(1);
  });
});
