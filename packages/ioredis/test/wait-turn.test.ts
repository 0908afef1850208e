// wait({ maxWaitMs }) on a leakyBucket over a real Redis: the waiter's call carries the bucket's
// queue cut to its time left (the same key, smaller capacity, sent per call), so a turn past
// maxWaitMs is refused with WAIT_TIMEOUT and Redis is charged nothing; lone and batched calls.
import { createLimiter, fixedWindow, isFloodgateError, leakyBucket } from '@floodgate/core';
import { useRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IoRedisStore } from '../src/index.js';

const server = useRedisServer({ beforeAll, afterAll });

let client: Redis;
beforeAll(() => {
  client = new Redis(server().url);
});
afterAll(() => {
  client.disconnect();
});

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(isFloodgateError(e)).toBe(true);
    return (e as { code: string }).code;
  }
  throw new Error('expected a rejection');
}

type Limiter = ReturnType<typeof createLimiter>;
/** What Redis holds for the identity, as a peek sees it: each policy's units left. */
const remaining = async (l: Limiter, id: string) =>
  (await l.peek(id)).policies.map((p) => p.remaining);

describe('IoRedisStore: wait() refuses a leaky-bucket turn past maxWaitMs, charging nothing', () => {
  it('an hour-long interval: refused at once, the key unchanged', async () => {
    const l = createLimiter({
      store: new IoRedisStore(client),
      prefix: 'wt1',
      policy: [
        leakyBucket({ limit: 10, interval: '1h', queue: 40 }),
        fixedWindow({ limit: 100, window: '1h' }),
      ],
    });
    for (let i = 0; i < 3; i++) await l.limit('u'); // the next turn 18 min away
    const before = await remaining(l, 'u');
    const started = performance.now();
    expect(await code(l.wait('u', { maxWaitMs: 100 }))).toBe('WAIT_TIMEOUT');
    expect(await code(l.wait('u', { maxWaitMs: 60_000, cost: 2 }))).toBe('WAIT_TIMEOUT');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await remaining(l, 'u')).toEqual(before);
    // The policies' own keys only: a cut call writes where the whole queue would.
    expect((await client.keys('wt1:*')).length).toBe(2);
  });

  it('a turn within maxWaitMs is admitted and slept; batched with other calls', async () => {
    const l = createLimiter({
      store: new IoRedisStore(client),
      prefix: 'wt2',
      policy: leakyBucket({ limit: 10, interval: '1s', queue: 40 }),
    });
    for (let i = 0; i < 3; i++) await l.limit('u'); // the next turn ~300 ms away
    const before = await remaining(l, 'u');
    // Made in one tick: the store batches them into one script run, cut and whole calls alike.
    const [late, fits, other, plain] = await Promise.allSettled([
      l.wait('u', { maxWaitMs: 150 }),
      l.wait('v', { maxWaitMs: 150 }),
      l.wait('w', { maxWaitMs: 5_000 }),
      l.limit('x'),
    ]);
    expect(late.status === 'rejected' && isFloodgateError(late.reason) && late.reason.code).toBe(
      'WAIT_TIMEOUT',
    );
    expect(fits).toMatchObject({ status: 'fulfilled', value: { allowed: true, delayMs: 0 } });
    expect(other).toMatchObject({ status: 'fulfilled', value: { allowed: true } });
    expect(plain).toMatchObject({ status: 'fulfilled', value: { allowed: true } });
    expect((await remaining(l, 'u'))[0]).toBeGreaterThanOrEqual(before[0]!);
    const started = performance.now();
    const d = await l.wait('u', { maxWaitMs: 1000 });
    expect(d.allowed).toBe(true);
    expect(d.delayMs).toBeGreaterThan(0);
    expect(d.delayMs).toBeLessThanOrEqual(300);
    expect(performance.now() - started).toBeGreaterThanOrEqual(d.delayMs - 1);
  });

  it('a leaky bucket with blockFor: refused, its admission given back, no block set', async () => {
    const l = createLimiter({
      store: new IoRedisStore(client),
      prefix: 'wt3',
      policy: leakyBucket({ limit: 10, interval: '1h', queue: 40, blockFor: '1h' }),
    });
    for (let i = 0; i < 3; i++) await l.limit('u');
    const before = await remaining(l, 'u');
    expect(await code(l.wait('u', { maxWaitMs: 100 }))).toBe('WAIT_TIMEOUT');
    await new Promise((r) => setTimeout(r, 50)); // the refund runs after the refusal
    expect(await remaining(l, 'u')).toEqual(before);
    expect(await client.keys('wt3:*:blk')).toEqual([]);
    expect(await l.limit('u')).toMatchObject({ allowed: true });
  });
});
