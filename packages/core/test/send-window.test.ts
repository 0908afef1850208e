// The send window (redis/window.ts) with the limiter: what waits for a place, how long, and that
// a call whose caller gave up is never sent. The store here is a MapStore behind a window whose
// sender answers when the test says: the window and the limiter's timer are what is tested.
import { describe, expect, it } from 'vitest';
import { createLimiter, fixedWindow } from '../src/index.js';
import { QUEUE_FACTOR } from '../src/redis/window.js';
import type { StoreCall } from '../src/store.js';
import type { MapStore } from './map-store.js';
import { WindowedStore } from './windowed-store.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** A store that sends through a window of `max` and answers each call `delayMs` after sending. */
class DelayedStore extends WindowedStore {
  constructor(
    max: number,
    public delayMs: number,
  ) {
    super(max);
  }

  protected deliver(): Promise<void> {
    return sleep(this.delayMs);
  }
}

const policy = fixedWindow({ limit: 1_000, window: '1h' });

describe('the send window: a busy store is not an outage, a silent one is', () => {
  it('calls queued behind a store that keeps answering wait past timeoutMs and are decided by it', async () => {
    // 2 on the wire, 40 ms each: the 20th call waits ~400 ms, far past timeoutMs (100).
    const store = new DelayedStore(2, 40);
    const limiter = createLimiter({ store, policy, timeoutMs: 100, breaker: false });
    const ds = await Promise.all(Array.from({ length: 20 }, (_, i) => limiter.limit(`id${i}`)));
    expect(ds.map((d) => d.reason ?? 'store')).toEqual(ds.map(() => 'store'));
    expect(store.sent).toHaveLength(20);
    // Each went with timeoutMs from when it was sent, not from when it was made.
    for (const { call, deadline } of store.sent)
      expect(deadline).toBeGreaterThanOrEqual(call.deadline!);
    expect(store.sent.at(-1)!.deadline! - store.sent.at(-1)!.call.deadline!).toBeGreaterThan(200);
  });

  it('a store that stops answering: held calls give up after timeoutMs and are never sent', async () => {
    const store = new DelayedStore(2, 60_000); // the two on the wire never come back (in time)
    const limiter = createLimiter({
      store,
      policy,
      timeoutMs: 80,
      breaker: false,
      onStoreError: 'deny',
    });
    const started = performance.now();
    const ds = await Promise.all(Array.from({ length: 6 }, (_, i) => limiter.limit(`s${i}`)));
    const took = performance.now() - started;
    expect(ds.map((d) => d.reason)).toEqual(ds.map(() => 'store-timeout'));
    expect(took).toBeLessThan(1_000); // timeoutMs and scheduling, not the cap (20 × 80 ms)
    expect(store.sent).toHaveLength(2);
    // And nothing is sent later for the callers that gave up.
    store.delayMs = 0;
    await sleep(150);
    expect(store.sent).toHaveLength(2);
  });

  it('a run that never answers gives up its place at its deadline: dead calls do not clog the store', async () => {
    // Two places on the wire, both taken by calls to a part of the store that never answers (a
    // dead master, a client that dropped the commands).
    const store = new DelayedStore(2, 5);
    const answer = store.inner;
    (store as unknown as { inner: MapStore }).inner = {
      evaluate: (call: StoreCall) =>
        call.keys[0]!.includes('dead') ? new Promise(() => {}) : answer.evaluate(call),
    } as MapStore;
    const limiter = createLimiter({
      store,
      policy,
      timeoutMs: 60,
      breaker: false,
      onStoreError: 'deny',
    });
    const dead = await Promise.all([limiter.limit('dead1'), limiter.limit('dead2')]);
    expect(dead.map((d) => d.reason)).toEqual(['store-timeout', 'store-timeout']);
    // Their places are free again: later calls go on the wire and the store decides them.
    const alive = await Promise.all(Array.from({ length: 5 }, (_, i) => limiter.limit(`a${i}`)));
    expect(alive.map((d) => d.reason)).toEqual(alive.map(() => undefined));
    expect(store.sent).toHaveLength(7);
  });

  it('a call whose caller does not ask waitUntil keeps its own deadline, queued or not', async () => {
    const store = new DelayedStore(1, 30);
    const deadline = performance.now() + 50;
    const call = (id: string): StoreCall => ({
      policies: [policy],
      keys: [`k:${id}`],
      cost: 1,
      mode: 'limit',
      deadline,
    });
    const answers = await Promise.allSettled(
      ['a', 'b', 'c', 'd'].map((id) => store.evaluate(call(id))),
    );
    // The first two were sent by their deadline (with it); the rest were dropped unsent.
    for (const { deadline: d } of store.sent) expect(d).toBe(deadline);
    expect(store.sent.length).toBeLessThan(4);
    expect(answers.filter((a) => a.status === 'rejected')).toHaveLength(4 - store.sent.length);
  });

  it('a held call waits at most QUEUE_FACTOR × its timeout, however busy the store', async () => {
    // One on the wire, each answered in 10 ms (within timeoutMs, 20): a store that answers, but
    // 100 calls need a second, and the cap is 20 × 20 ms.
    const store = new DelayedStore(1, 10);
    const limiter = createLimiter({
      store,
      policy,
      timeoutMs: 20,
      breaker: false,
      onStoreError: 'deny',
    });
    const ds = await Promise.all(Array.from({ length: 100 }, (_, i) => limiter.limit(`c${i}`)));
    const byStore = ds.filter((d) => d.reason === undefined).length;
    // The head of the queue is decided by the store; the tail gives up at its cap, unsent.
    expect(byStore).toBeGreaterThanOrEqual(10);
    expect(byStore).toBeLessThan(60);
    expect(store.sent.length).toBeLessThan(70);
    expect(QUEUE_FACTOR).toBe(20);
  });
});
