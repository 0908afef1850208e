import { afterEach, describe, expect, it, vi } from 'vitest';
import { isFloodgateError } from '../src/errors.js';
import { Timeouts } from '../src/timeout.js';

afterEach(() => {
  vi.useRealTimers();
});

async function outcome(p: Promise<unknown>): Promise<unknown> {
  try {
    return { value: await p };
  } catch (error) {
    return { error: isFloodgateError(error) ? error.code : error };
  }
}

/** Records the outcome of `p` into `into[i]` once it settles. */
function watch(p: Promise<unknown>, into: unknown[], i: number): void {
  void outcome(p).then((o) => {
    into[i] = o;
  });
}

const never = () => new Promise<never>(() => {});
// The real setImmediate (fake timers leave the queue's hop after a timer real): lets it run.
const realImmediate = setImmediate;
const advance = async (ms: number) => {
  await vi.advanceTimersByTimeAsync(ms);
  await new Promise((r) => realImmediate(r));
};
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('Timeouts (one queue and one timer per limiter)', () => {
  it('passes a value through; the timer, once it fires, finds nothing and is not armed again', async () => {
    vi.useFakeTimers();
    const t = new Timeouts(50);
    expect(await t.bound(Promise.resolve(7))).toBe(7);
    await vi.advanceTimersByTimeAsync(50);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("passes the store's own rejection through as it is", async () => {
    vi.useFakeTimers();
    const cause = new Error('refused');
    expect(await outcome(new Timeouts(50).bound(Promise.reject(cause)))).toEqual({ error: cause });
  });

  it('rejects with STORE_TIMEOUT once ms have passed, not before', async () => {
    vi.useFakeTimers();
    const seen: unknown[] = [];
    watch(new Timeouts(50).bound(never()), seen, 0);
    await vi.advanceTimersByTimeAsync(49);
    expect(seen[0]).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(seen[0]).toEqual({ error: 'STORE_TIMEOUT' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("never before the call's deadline: a timer that fires early waits out the rest", async () => {
    // Node's timers count from the loop's cached ms, so one may fire before performance.now()
    // reaches the deadline the Redis script was sent. Here only performance.now() is fake and
    // stands still: the real timer fires, again and again, and the call still waits.
    vi.useFakeTimers({ toFake: ['performance'] });
    const seen: unknown[] = [];
    watch(new Timeouts(20).bound(never(), performance.now() + 20), seen, 0);
    await new Promise((r) => setTimeout(r, 80));
    expect(seen[0]).toBeUndefined();
    vi.advanceTimersByTime(20); // performance.now() reaches the deadline
    await new Promise((r) => setTimeout(r, 80));
    expect(seen[0]).toEqual({ error: 'STORE_TIMEOUT' });
  });

  it('many calls share one timer; each times out at its own deadline, the answered ones never', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] });
    const t = new Timeouts(100);
    const seen: unknown[] = [];
    const answers: ((v: number) => void)[] = [];
    for (let i = 0; i < 40; i++) {
      // Calls 10 ms apart; every other one is answered 40 ms after it was made.
      watch(t.bound(i % 2 === 0 ? never() : new Promise<number>((r) => (answers[i] = r))), seen, i);
      expect(vi.getTimerCount()).toBe(1);
      if (i >= 5 && i % 2 === 1) answers[i - 4]!(i - 4);
      await advance(10);
    }
    // Now 400 ms after the first call: calls 0..30 are past their deadline (call i at 10 i + 100).
    for (let i = 0; i < 40; i++) {
      if (i % 2 === 1 && i <= 35) expect(seen[i], `call ${i}`).toEqual({ value: i });
      else if (i % 2 === 0 && i * 10 + 100 <= 400) {
        expect(seen[i], `call ${i}`).toEqual({ error: 'STORE_TIMEOUT' });
      } else expect(seen[i], `call ${i}`).toBeUndefined();
    }
    await advance(100);
    for (let i = 0; i < 40; i += 2) expect(seen[i]).toEqual({ error: 'STORE_TIMEOUT' });
    for (let i = 37; i < 40; i += 2) answers[i]!(i); // answered after their own timeout
    await advance(0);
    expect(seen[37]).toEqual({ error: 'STORE_TIMEOUT' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps the process alive while a call waits, and not once none does', async () => {
    const before = timers();
    const t = new Timeouts(60_000);
    let answer!: (v: number) => void;
    const first = t.bound(new Promise<number>((r) => (answer = r)));
    expect(timers()).toBe(before + 1);
    answer(1);
    expect(await first).toBe(1);
    expect(timers()).toBe(before); // armed still, but unref'd
    let again!: (v: number) => void;
    const second = t.bound(new Promise<number>((r) => (again = r)));
    expect(timers()).toBe(before + 1);
    again(2);
    expect(await second).toBe(2);
    expect(timers()).toBe(before);
  });

  it('a reply after the timeout changes nothing: the caller has its STORE_TIMEOUT', async () => {
    vi.useFakeTimers();
    let answer!: (v: number) => void;
    const late = new Timeouts(20).bound(new Promise<number>((r) => (answer = r)));
    const result = outcome(late);
    await vi.advanceTimersByTimeAsync(20);
    answer(1);
    expect(await result).toEqual({ error: 'STORE_TIMEOUT' });
  });

  it("follows a store's thenable, as Promise.race did", async () => {
    // biome-ignore lint/suspicious/noThenProperty: a thenable is what this test is about
    const thenable = { then: (ok: (v: string) => void) => ok('from a thenable') };
    const t = new Timeouts(50);
    expect(await t.bound(thenable as unknown as Promise<string>)).toBe('from a thenable');
  });
});
