// RedisStore over a hand-written RedisTransport, as the author of a store for another client
// would write one (here on an ioredis connection to a real redis-server): what the store decides
// from the transport, and when.
import { fixedWindow, isFloodgateError } from '@floodgate/core';
import {
  RedisStore,
  type RedisStoreOptions,
  type RedisTransport,
  scriptFor,
} from '@floodgate/core/redis';
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

/** Both scripts loaded: of three calls in one tick the first goes alone, the others batched. */
async function warm(store: RedisStore, deadline?: number): Promise<void> {
  const warmCall = () => store.evaluate({ ...call('warm'), ...(deadline ? { deadline } : {}) });
  await warmCall();
  await Promise.all([0, 1, 2].map(warmCall));
}

/** How many EVALSHA twelve calls of one tick take. */
async function evalshas(t: RedisTransport, options: RedisStoreOptions): Promise<number> {
  n++;
  const store = new RedisStore(t, options);
  // Both scripts loaded first: the calls under test are EVALSHA only.
  await warm(store);
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

  it('batches the calls made while one is in flight when the transport can and batch is on', async () => {
    // The first goes alone, the other eleven (made while it is in flight) as one run, or as
    // runs of 4, 4 and 3.
    expect(await evalshas(transport(true).t, {})).toBe(2);
    expect(await evalshas(transport(true).t, { batch: { maxCalls: 4 } })).toBe(4);
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

const plainSha = scriptFor([policy]).sha1;
const tick = () => new Promise<void>((resolve) => process.nextTick(resolve));
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A batching transport that notes each command as it is handed over: `plain` or `batch` for a
 * script run, else the command's name. `fault` may make a run fail, or never be answered (as a
 * client that lost it would).
 */
function recording(fault: (args: string[]) => 'fail' | 'drop' | undefined = () => undefined) {
  const sent: string[] = [];
  const t: RedisTransport = {
    label: 'recording',
    canBatch: true,
    send: (_firstKey, name, args) => {
      sent.push(name === 'EVALSHA' ? (args[0] === plainSha ? 'plain' : 'batch') : name);
      const f = fault(args);
      if (f === 'fail') return Promise.reject(new Error('lost on the way'));
      if (f === 'drop') return new Promise(() => {});
      return redis.call(name, args);
    },
    isReady: () => true,
  };
  return { t, sent };
}

const remaining = (results: readonly (readonly { remaining: number }[])[]) =>
  results.map(([r]) => r!.remaining);

describe('RedisStore batching: which calls wait for the next tick', () => {
  it('a call with no run in flight is handed to the client at once; calls made meanwhile go on the next tick, as one run', async () => {
    n++;
    const { t, sent } = recording();
    const store = new RedisStore(t, {});
    await warm(store);
    await turn(); // past the tick the warm-up's batch reply held
    sent.length = 0;
    const a = store.evaluate(call('a'));
    expect(sent).toEqual(['plain']); // before this line: no tick waited
    const more = [store.evaluate(call('b')), store.evaluate(call('c'))];
    expect(sent).toEqual(['plain']);
    await tick(); // after the flush the calls above scheduled
    expect(sent).toEqual(['plain', 'batch']);
    expect(remaining(await Promise.all([a, ...more]))).toEqual([99, 99, 99]);
    // Woken by the batch's reply with nothing in flight, a caller still waits for the tick, so
    // that the others woken with it can join it.
    const d = store.evaluate(call('d'));
    expect(sent).toHaveLength(2);
    await d;
    expect(sent).toEqual(['plain', 'batch', 'plain']);
    // A tick later, each call awaited in turn goes at once.
    await turn();
    for (let i = 0; i < 3; i++) {
      const p = store.evaluate(call('seq'));
      expect(sent).toHaveLength(4 + i);
      expect((await p)[0]!.remaining).toBe(99 - i);
    }
    expect(sent.slice(3)).toEqual(['plain', 'plain', 'plain']);
  });

  it('a failed run, alone or batched, leaves nothing in flight', async () => {
    n++;
    const { t, sent } = recording((args) =>
      args.some((a) => a.includes('fail')) ? 'fail' : undefined,
    );
    const store = new RedisStore(t, {});
    await warm(store);
    await turn(); // past the tick the warm-up's batch reply held
    sent.length = 0;
    await expect(store.evaluate(call('fail-1'))).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
    });
    const after = store.evaluate(call('x'));
    expect(sent).toEqual(['plain', 'plain']);
    await after;
    // A batch run that fails fails each of its calls; then, a tick later, a call goes at once.
    const opener = store.evaluate(call('y'));
    const batched = await Promise.allSettled(
      [call('fail-2'), call('z')].map((c) => store.evaluate(c)),
    );
    expect(batched.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await opener;
    await turn();
    const last = store.evaluate(call('x'));
    expect(sent).toEqual(['plain', 'plain', 'plain', 'batch', 'plain']);
    expect((await last)[0]!.remaining).toBe(98);
  });

  it('a run whose reply never comes holds calls back only until its deadline', async () => {
    n++;
    const { t, sent } = recording((args) =>
      args.some((a) => a.includes('lost')) ? 'drop' : undefined,
    );
    const store = new RedisStore(t, {});
    // With a deadline: the store learns Redis's clock (one TIME) before the calls under test.
    await warm(store, performance.now() + 60_000);
    await turn();
    sent.length = 0;
    let settled = false;
    const lost = store.evaluate({ ...call('lost'), deadline: performance.now() + 100 });
    lost.then(
      () => (settled = true),
      () => (settled = true),
    );
    expect(sent).toEqual(['plain']);
    // In flight, not past its deadline: the next call waits for the tick.
    const b = store.evaluate(call('b'));
    expect(sent).toHaveLength(1);
    await b;
    await new Promise((resolve) => setTimeout(resolve, 150));
    // Past it: its caller has had STORE_TIMEOUT; the next call goes at once.
    const c = store.evaluate(call('c'));
    expect(sent).toEqual(['plain', 'plain', 'plain']);
    expect(remaining(await Promise.all([b, c]))).toEqual([99, 99]);
    expect(settled).toBe(false); // the store never heard back about the lost call
  });
});
