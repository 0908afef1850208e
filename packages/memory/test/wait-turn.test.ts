// wait({ maxWaitMs }) on a leakyBucket with MemoryStore: a turn past maxWaitMs is refused with
// WAIT_TIMEOUT and nothing is charged. The waiter's call carries the bucket with its queue cut to
// the time left (another policies array, the same policy id): the store must find the same
// entry through it, on its fast path and with blockFor on its general one.
import { createLimiter, isFloodgateError, leakyBucket, tokenBucket } from '@floodgate/core';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(isFloodgateError(e)).toBe(true);
    return (e as { code: string }).code;
  }
  throw new Error('expected a rejection');
}

describe('MemoryStore: wait() and a leaky bucket’s turn', () => {
  it.each([
    ['alone', [leakyBucket({ limit: 10, interval: '1s', queue: 40 })]],
    [
      'beside a token bucket',
      [
        leakyBucket({ limit: 10, interval: '1s', queue: 40 }),
        tokenBucket({ limit: 100, interval: '1h' }),
      ],
    ],
    ['with blockFor', [leakyBucket({ limit: 10, interval: '1s', queue: 40, blockFor: '1h' })]],
  ])(
    '%s: refused at once, nothing charged; a turn within the wait is admitted',
    async (_, policy) => {
      let now = 1_000_000;
      const l = createLimiter({ store: new MemoryStore({ now: () => now }), policy });
      for (let i = 0; i < 3; i++) await l.limit('u'); // the next turn 300 ms away
      const before = (await l.peek('u')).policies.map((p) => p.remaining);
      expect(await code(l.wait('u', { maxWaitMs: 100 }))).toBe('WAIT_TIMEOUT');
      await new Promise((r) => setTimeout(r, 10)); // with blockFor, the refund follows the refusal
      expect((await l.peek('u')).policies.map((p) => p.remaining)).toEqual(before);
      // 250 ms later on the store’s clock, the turn is 50 ms away: admitted and slept.
      now += 250;
      const d = await l.wait('u', { maxWaitMs: 1000 });
      expect(d).toMatchObject({ allowed: true, delayMs: 50 });
    },
  );
});
