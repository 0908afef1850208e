// wait({ maxWaitMs }) on a leakyBucket: a turn later than maxWaitMs is refused with WAIT_TIMEOUT
// and charges nothing; one within it is admitted and slept. The store's clock stands still here,
// so a queue is exactly as long as the test made it (the waits themselves run on real timers).
import { describe, expect, it, vi } from 'vitest';
import { type FloodgateError, isFloodgateError } from '../src/errors.js';
import { type DecisionEvent, fixedWindow, leakyBucket, tokenBucket } from '../src/index.js';
import { createLimiter } from '../src/limiter.js';
import { MapStore } from './map-store.js';

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    expect(isFloodgateError(e)).toBe(true);
    return (e as FloodgateError).code;
  }
  throw new Error('expected a rejection');
}

const frozen = () => new MapStore(() => 1_000_000);

/** What the store holds for the identity, as a peek sees it (the queue's length in it). */
async function held(l: ReturnType<typeof createLimiter>, id = 'u') {
  const d = await l.peek(id);
  return d.policies.map((p) => [p.remaining, p.delayMs, p.retryAfterMs]);
}

describe('wait() and a leaky bucket’s turn', () => {
  it('a turn given back (a bucket with blockFor) is refused only once the store has it back', async () => {
    // A store whose refunds land later than a call made right after them (as Deno KV's retried
    // commits can): the caller's next limit() must not find the refused turn still charged.
    class SlowRefunds extends MapStore {
      override async evaluate(call: Parameters<MapStore['evaluate']>[0]) {
        if (call.mode === 'refund') await new Promise((r) => setTimeout(r, 30));
        return super.evaluate(call);
      }
    }
    const l = createLimiter({
      store: new SlowRefunds(() => 1_000_000),
      policy: [
        leakyBucket({ limit: 1, interval: '1s', queue: 1, blockFor: '1s' }),
        fixedWindow({ limit: 2, window: '1h', blockFor: '1h' }),
      ],
    });
    await l.limit('u'); // the next turn is 1 s away
    expect(await code(l.wait('u', { maxWaitMs: 0 }))).toBe('WAIT_TIMEOUT');
    // The window's second slot is free again: admitted (a turn later), not denied and blocked.
    const next = await l.limit('u');
    expect([next.allowed, next.policies[1]!.remaining]).toEqual([true, 0]);
  });

  it('refuses at once a turn past maxWaitMs, charging nothing (3 s ahead, 100 ms to wait)', async () => {
    const store = frozen();
    const events: DecisionEvent[] = [];
    const l = createLimiter({
      store,
      policy: leakyBucket({ limit: 10, interval: '1s', queue: 40 }),
      onDecision: (e) => events.push(e),
    });
    for (let i = 0; i < 30; i++) await l.limit('u'); // the 31st starts 3 s from now
    const before = await held(l);
    const calls = store.calls;
    // Told, not slept: with timers that never fire, the refusal still comes (a bound on the
    // elapsed time failed on a loaded machine, which took 177 ms to tell).
    vi.useFakeTimers({ toFake: ['setTimeout', 'setInterval', 'setImmediate'] });
    let error: Promise<unknown>;
    try {
      error = l.wait('u', { maxWaitMs: 100 });
      expect(await code(error)).toBe('WAIT_TIMEOUT');
    } finally {
      vi.useRealTimers();
    }
    await error.catch((e: Error) => expect(e.message).toContain('the turn comes in 3000 ms'));
    expect(store.calls - calls).toBe(1);
    expect(await held(l)).toEqual(before);
    const last = events.filter((e) => e.operation === 'wait').at(-1)!;
    expect(last).toMatchObject({ outcome: 'denied', decision: { allowed: false } });
  });

  it('an hour-long interval: refused at once, not slept for hours', async () => {
    const store = frozen();
    const l = createLimiter({
      store,
      policy: leakyBucket({ limit: 2, interval: '1h', queue: 5 }),
    });
    await l.limit('u');
    await l.limit('u'); // the next turn is an hour away
    const before = await held(l);
    const waiters = [l.wait('u', { maxWaitMs: 100 }), l.wait('u', { maxWaitMs: 60_000 })];
    expect(await Promise.all(waiters.map(code))).toEqual(['WAIT_TIMEOUT', 'WAIT_TIMEOUT']);
    expect(await held(l)).toEqual(before);
    // A waiter with the time for it is admitted, its turn an hour out (not slept here: aborted).
    const c = new AbortController();
    const patient = l.wait('u', { maxWaitMs: 3_700_000, signal: c.signal });
    await new Promise((r) => setTimeout(r, 20));
    c.abort();
    expect(await code(patient)).toBe('ABORTED');
    expect(await held(l)).not.toEqual(before); // that one was charged: it was admitted
  });

  it('admits a turn within maxWaitMs, with the same delay the whole queue gives, and sleeps it', async () => {
    const store = frozen();
    const l = createLimiter({
      store,
      policy: leakyBucket({ limit: 10, interval: '1s', queue: 40 }),
    });
    for (let i = 0; i < 3; i++) await l.limit('u'); // the next starts 300 ms from now
    const before = await held(l);
    expect(await code(l.wait('u', { maxWaitMs: 250 }))).toBe('WAIT_TIMEOUT');
    expect(await held(l)).toEqual(before);
    const started = performance.now();
    // (The store's clock stands still: a turn at exactly maxWaitMs would be a fraction past it.)
    const d = await l.wait('u', { maxWaitMs: 350 });
    expect(d).toMatchObject({ allowed: true, delayMs: 300 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(299);
    // Charged exactly as limit() would have: the next turn is 400 ms away.
    const next = await l.limit('u');
    expect(next.delayMs).toBe(400);
  });

  it('a turn between whole slots of maxWaitMs is still admitted, within it', async () => {
    const store = new MapStore();
    const l = createLimiter({
      store,
      policy: leakyBucket({ limit: 10, interval: '1s', queue: 40 }),
    });
    for (let i = 0; i < 3; i++) await l.limit('u');
    // Some 250 ms to the next turn: maxWaitMs of that plus 20 holds 2 whole slots of 100 ms, not
    // 3, and the waiter is admitted once the turn is 2 slots away, within its time.
    await new Promise((r) => setTimeout(r, 50));
    const turn = (await l.peek('u')).delayMs;
    expect(await code(l.wait('u', { maxWaitMs: turn - 30 }))).toBe('WAIT_TIMEOUT');
    const d = await l.wait('u', { maxWaitMs: turn + 20 });
    expect(d.allowed).toBe(true);
    // Admitted with a turn of at most the 2 slots its time held (not timed on the wall clock: a
    // loaded machine fires timers late).
    expect(d.delayMs).toBeLessThanOrEqual(200);
  });

  it('with another policy beside it, and a cost: refused at once, nothing charged anywhere', async () => {
    const store = frozen();
    const l = createLimiter({
      store,
      policy: [
        fixedWindow({ limit: 100, window: '1h' }),
        leakyBucket({ limit: 10, interval: '1s', queue: 40 }),
        tokenBucket({ limit: 50, interval: '1m' }),
      ],
    });
    for (let i = 0; i < 10; i++) await l.limit('u'); // the next turn 1 s away
    const before = await held(l);
    expect(await code(l.wait('u', { maxWaitMs: 500, cost: 3 }))).toBe('WAIT_TIMEOUT');
    expect(await held(l)).toEqual(before);
    const d = await l.wait('u', { maxWaitMs: 1050, cost: 3 });
    expect(d).toMatchObject({ allowed: true, delayMs: 1000 });
  });

  it('a leaky bucket with blockFor: refused, its admission given back, and no block set', async () => {
    const store = frozen();
    const l = createLimiter({
      store,
      policy: leakyBucket({ limit: 10, interval: '1s', queue: 40, blockFor: '1h' }),
    });
    for (let i = 0; i < 30; i++) await l.limit('u');
    const before = await held(l);
    expect(await code(l.wait('u', { maxWaitMs: 100 }))).toBe('WAIT_TIMEOUT');
    await new Promise((r) => setTimeout(r, 10)); // the refund runs after the refusal
    expect(await held(l)).toEqual(before);
    // Not blocked: a limit() is admitted with its turn, as before the refused wait.
    expect(await l.limit('u')).toMatchObject({ allowed: true, delayMs: 3000 });
  });
});
