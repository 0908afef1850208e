import { afterEach, describe, expect, it, vi } from 'vitest';
import { isFloodgateError } from '../src/errors.js';
import { withTimeout } from '../src/timeout.js';

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

describe('withTimeout (one promise and one timer per call)', () => {
  it('passes a value through and leaves no timer behind', async () => {
    vi.useFakeTimers();
    expect(await withTimeout(Promise.resolve(7), 50)).toBe(7);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("passes the store's own rejection through as it is, and clears its timer", async () => {
    vi.useFakeTimers();
    const cause = new Error('refused');
    expect(await outcome(withTimeout(Promise.reject(cause), 50))).toEqual({ error: cause });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects with STORE_TIMEOUT once ms have passed, not before', async () => {
    vi.useFakeTimers();
    let settled: unknown;
    void outcome(withTimeout(new Promise(() => {}), 50)).then((o) => {
      settled = o;
    });
    await vi.advanceTimersByTimeAsync(49);
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toEqual({ error: 'STORE_TIMEOUT' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it("never before the call's deadline: a timer that fires early waits out the rest", async () => {
    // Node's timers count from the loop's cached ms, so one may fire before performance.now()
    // reaches the deadline the Redis script was sent; here the deadline is 30 ms past the timer.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] });
    let settled: unknown;
    const deadline = performance.now() + 80;
    void outcome(withTimeout(new Promise(() => {}), 50, deadline)).then((o) => {
      settled = o;
    });
    await vi.advanceTimersByTimeAsync(79);
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toEqual({ error: 'STORE_TIMEOUT' });
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a reply after the timeout changes nothing: the caller has its STORE_TIMEOUT', async () => {
    vi.useFakeTimers();
    let answer!: (v: number) => void;
    const late = withTimeout(new Promise<number>((r) => (answer = r)), 20);
    const result = outcome(late);
    await vi.advanceTimersByTimeAsync(20);
    answer(1);
    expect(await result).toEqual({ error: 'STORE_TIMEOUT' });
  });

  it("follows a store's thenable, as Promise.race did", async () => {
    // biome-ignore lint/suspicious/noThenProperty: a thenable is what this test is about
    const thenable = { then: (ok: (v: string) => void) => ok('from a thenable') };
    expect(await withTimeout(thenable as unknown as Promise<string>, 50)).toBe('from a thenable');
  });

  it('without ms, returns the promise itself: no timer, no wrapper', () => {
    const p = Promise.resolve(1);
    expect(withTimeout(p, undefined)).toBe(p);
  });
});
