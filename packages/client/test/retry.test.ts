import { describe, expect, it } from 'vitest';
import {
  isRetryDelayTooLongError,
  type Jitter,
  type RetryEvent,
  RetryLater,
  retry,
} from '../src/index.js';

/** Delays of `n` failing attempts under `jitter`, with a pinned random source. */
async function delays(jitter: Jitter, random: () => number, n = 6): Promise<number[]> {
  const seen: number[] = [];
  await retry(
    () => {
      throw new Error('down');
    },
    {
      jitter,
      random,
      retries: n,
      baseDelayMs: 1,
      maxBackoffMs: 20,
      onRetry: (e) => {
        seen.push(e.delayMs);
      },
    },
  ).catch(() => undefined);
  return seen;
}

describe('retry(fn)', () => {
  it('returns what fn returns, after failures', async () => {
    let calls = 0;
    const value = await retry(
      ({ attempt }) => {
        calls += 1;
        if (attempt < 3) throw new Error('flaky');
        return 'done';
      },
      { baseDelayMs: 1 },
    );
    expect([value, calls]).toEqual(['done', 3]);
  });

  it('rethrows the last error when retries run out', async () => {
    let n = 0;
    const error = await retry(
      () => {
        n += 1;
        throw new Error(`fail ${n}`);
      },
      { retries: 2, baseDelayMs: 1 },
    ).catch((e: Error) => e.message);
    expect(error).toBe('fail 3');
  });

  it('shouldRetry can refuse an error', async () => {
    let n = 0;
    const error = await retry(
      () => {
        n += 1;
        throw new TypeError('bad input');
      },
      { shouldRetry: (e) => !(e instanceof TypeError) },
    ).catch((e) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(n).toBe(1);
  });

  it('RetryLater is honoured like Retry-After: waited, jittered upward only, bounded', async () => {
    const events: RetryEvent[] = [];
    const started = Date.now();
    let n = 0;
    await retry(
      () => {
        n += 1;
        if (n === 1) throw new RetryLater(300);
        return n;
      },
      {
        random: () => 0.5,
        maxServerJitterMs: 200,
        onRetry: (e) => {
          events.push(e);
        },
      },
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(events.map((e) => [e.reason, e.source, e.serverDelayMs, e.delayMs])).toEqual([
      ['retry-later', 'retry-later', 300, 400],
    ]);
  });

  it('a RetryLater beyond maxDelayMs throws by default', async () => {
    const error = await retry(
      () => {
        throw new RetryLater(10_000);
      },
      { maxDelayMs: 1000 },
    ).catch((e) => e);
    expect(isRetryDelayTooLongError(error)).toBe(true);
    expect((error as { cause: unknown }).cause).toBeInstanceOf(RetryLater);
  });
});

describe('jitter strategies', () => {
  it("'none' is the exponential backoff, capped", async () => {
    expect(await delays('none', () => 0.5)).toEqual([1, 2, 4, 8, 16, 20]);
  });

  it("'full' is uniform in [0, backoff]", async () => {
    expect(await delays('full', () => 0)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(await delays('full', () => 0.5)).toEqual([1, 1, 2, 4, 8, 10]);
    expect(await delays('full', () => 1)).toEqual([1, 2, 4, 8, 16, 20]);
  });

  it("'equal' keeps half the backoff", async () => {
    expect(await delays('equal', () => 0)).toEqual([1, 1, 2, 4, 8, 10]);
    expect(await delays('equal', () => 1)).toEqual([1, 2, 4, 8, 16, 20]);
  });

  it("'decorrelated' grows from the previous wait, within [base, 3 x previous], capped", async () => {
    expect(await delays('decorrelated', () => 1)).toEqual([3, 9, 20, 20, 20, 20]);
    expect(await delays('decorrelated', () => 0)).toEqual([1, 1, 1, 1, 1, 1]);
    const random = await delays('decorrelated', Math.random, 30);
    for (const d of random) expect(d >= 1 && d <= 20).toBe(true);
  });

  it('a random source out of [0, 1] cannot shorten a server delay', async () => {
    for (const r of [-5, Number.NaN, 7]) {
      const events: RetryEvent[] = [];
      let n = 0;
      await retry(
        () => {
          n += 1;
          if (n === 1) throw new RetryLater(10);
          return n;
        },
        {
          random: () => r,
          maxServerJitterMs: 20,
          onRetry: (e) => {
            events.push(e);
          },
        },
      );
      const delay = events[0]?.delayMs ?? -1;
      expect(delay >= 10 && delay <= 30).toBe(true);
    }
  });
});
