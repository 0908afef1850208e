import { describe, expect, it } from 'vitest';
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

describe('limiter.wait', () => {
  it('resolves with an admitted decision once the policy admits', async () => {
    const store = new MapStore();
    const l = createLimiter({ store, policy: tokenBucket({ limit: 1, interval: '40ms' }) });
    await l.limit('u');
    const denied = await l.peek('u');
    expect(denied.allowed).toBe(false);
    const d = await l.wait('u', { maxWaitMs: 5_000 });
    expect(d.allowed).toBe(true);
    expect((await l.peek('u')).allowed).toBe(false); // it charged
  });

  it('serves waiters first in, first out, with one store call per turn (no thundering retries)', async () => {
    const store = new MapStore();
    const l = createLimiter({ store, policy: tokenBucket({ limit: 1, interval: '30ms' }) });
    await l.limit('u');
    const before = store.calls;
    const order: number[] = [];
    const waits = [0, 1, 2, 3].map((i) =>
      l.wait('u', { maxWaitMs: 10_000 }).then((d) => {
        expect(d.allowed).toBe(true);
        order.push(i);
      }),
    );
    await Promise.all(waits);
    expect(order).toEqual([0, 1, 2, 3]);
    // Only the first waiter asks; each turn takes one admitted call and at most a few denied
    // retries of the first waiter (a timer may fire a tick early on the store's ms clock).
    expect(store.calls - before).toBeLessThanOrEqual(4 * 3);
    expect(store.calls - before).toBeGreaterThanOrEqual(4);
  });

  it('rejects at once with WAIT_TIMEOUT when the denial says the turn is too far', async () => {
    const store = new MapStore();
    const events: DecisionEvent[] = [];
    const l = createLimiter({
      store,
      policy: fixedWindow({ limit: 1, window: '1h' }),
      onDecision: (e) => events.push(e),
    });
    await l.limit('u');
    const before = store.calls;
    const behind = l.wait('u', { maxWaitMs: 50 });
    expect(await code(l.wait('u', { maxWaitMs: 100 }))).toBe('WAIT_TIMEOUT');
    expect(await code(behind)).toBe('WAIT_TIMEOUT');
    expect(store.calls - before).toBe(1); // one store call told both: the first waiter's
    const waitEvents = events.filter((e) => e.operation === 'wait');
    expect(waitEvents.map((e) => e.outcome)).toEqual(['denied', 'denied']);
    expect(waitEvents[0]!.decision?.allowed).toBe(false);
  });

  it('an abort rejects at once with ABORTED and charges nothing', async () => {
    // The store's clock moves only when the test says: a window on the real clock could roll over
    // before the aborts (a window of 1 s on the wall clock, first charged in its last ms, did on a
    // loaded machine, and let a waiter be admitted).
    let now = 1_000_000;
    const store = new MapStore(() => now);
    const l = createLimiter({ store, policy: fixedWindow({ limit: 1, window: '1s' }) });
    await l.limit('u');
    const pre = new AbortController();
    pre.abort();
    const calls = store.calls;
    expect(await code(l.wait('u', { maxWaitMs: 1_000, signal: pre.signal }))).toBe('ABORTED');
    expect(store.calls).toBe(calls);
    const first = new AbortController();
    const second = new AbortController();
    const a = l.wait('u', { maxWaitMs: 10_000, signal: first.signal });
    const b = l.wait('u', { maxWaitMs: 10_000, cost: 1, signal: second.signal });
    await new Promise((r) => setTimeout(r, 5));
    second.abort();
    first.abort();
    expect(await code(b)).toBe('ABORTED');
    expect(await code(a)).toBe('ABORTED');
    const after = await l.peek('u');
    expect(after.allowed).toBe(false); // still the first charge only: limit 1 used, nothing more
    // The next window, and time for any timer a waiter left behind to fire (none may).
    now += 1_000;
    await new Promise((r) => setTimeout(r, 1_050));
    expect((await l.peek('u')).remaining).toBe(1); // the new window: no late charge by a waiter
  });

  it('when the first waiter aborts, the next takes its place; identities do not wait on each other', async () => {
    const store = new MapStore();
    const l = createLimiter({ store, policy: tokenBucket({ limit: 1, interval: '60ms' }) });
    await l.limit('u');
    const c = new AbortController();
    const first = l.wait('u', { maxWaitMs: 5_000, signal: c.signal });
    const second = l.wait('u', { maxWaitMs: 5_000 });
    const other = l.wait('v', { maxWaitMs: 0 }); // another identity: admitted at once
    expect((await other).allowed).toBe(true);
    await new Promise((r) => setTimeout(r, 5));
    c.abort();
    expect(await code(first)).toBe('ABORTED');
    expect((await second).allowed).toBe(true);
  });

  it('a waiter aborted while it sleeps its leaky-bucket turn lets the next one go', async () => {
    const store = new MapStore();
    const l = createLimiter({
      store,
      policy: leakyBucket({ limit: 1, interval: '200ms', queue: 3 }),
    });
    const t0 = performance.now();
    await l.limit('u');
    const c = new AbortController();
    const held = l.wait('u', { maxWaitMs: 5_000, signal: c.signal });
    const next = l.wait('u', { maxWaitMs: 5_000 });
    await new Promise((r) => setTimeout(r, 20));
    c.abort();
    expect(await code(held)).toBe('ABORTED');
    const d = await next;
    expect(d.allowed).toBe(true);
    // The aborted waiter's turn (t0 + 200 ms) was charged: the next one's comes after it, at
    // t0 + 400 ms, told as a delay from when it was admitted (at the latest, now).
    expect(d.delayMs).toBeGreaterThanOrEqual(400 - (performance.now() - t0) - 2);
  });

  it('sleeps a leaky bucket’s delayMs before resolving: resolved means go now', async () => {
    const store = new MapStore();
    const l = createLimiter({
      store,
      policy: leakyBucket({ limit: 1, interval: '60ms', queue: 2 }),
    });
    await l.limit('u');
    const started = performance.now();
    const d = await l.wait('u', { maxWaitMs: 5_000 });
    expect(d.allowed).toBe(true);
    expect(d.delayMs).toBeGreaterThan(0);
    expect(performance.now() - started).toBeGreaterThanOrEqual(d.delayMs - 1);
  });

  it('checks its options before any store is touched', async () => {
    const store = new MapStore();
    const l = createLimiter({ store, policy: fixedWindow({ limit: 3, window: '1s' }) });
    const bad = [
      {},
      { maxWaitMs: -1 },
      { maxWaitMs: 1.5 },
      { maxWaitMs: 10, signal: 'x' },
      { maxWaitMs: 10, extra: 1 },
    ];
    for (const o of bad) {
      expect(await code(l.wait('u', o as { maxWaitMs: number }))).toBe('INVALID_OPTION');
    }
    expect(await code(l.wait('u', { maxWaitMs: 10, cost: 0 }))).toBe('INVALID_COST');
    expect(await code(l.wait('u', { maxWaitMs: 10, cost: 4 }))).toBe('COST_EXCEEDS_CAPACITY');
    expect(await code(l.wait('', { maxWaitMs: 10 }))).toBe('INVALID_KEY');
    expect(store.calls).toBe(0);
    expect((await l.wait('u', { maxWaitMs: Number.POSITIVE_INFINITY })).allowed).toBe(true);
  });

  it('in shadow mode resolves at once with the shadow denial', async () => {
    const store = new MapStore();
    const l = createLimiter({
      store,
      policy: fixedWindow({ limit: 1, window: '1h' }),
      shadow: true,
    });
    await l.limit('u');
    const d = await l.wait('u', { maxWaitMs: 0 });
    expect(d).toMatchObject({ allowed: true, shadowDenied: true });
  });
});
