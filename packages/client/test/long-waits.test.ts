import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  fetchWithRetry,
  isRetryDeadlineError,
  isRetryDelayTooLongError,
  type RetryDeadlineError,
  type RetryDelayTooLongError,
  RetryLater,
  retry,
  withRetry,
} from '../src/index.js';
import { ok, startServer, type TestServer } from './server.js';

// Issue #14 items 6 and 7: a paced wait ignored maxDelayMs and the deadline, and a wait or
// deadline past 2^31 − 1 ms overflowed the timer and fired at once.

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());
afterEach(() => {
  vi.useRealTimers();
});

// 1000 a day (one per 86.4 s once the quota is back), none left for 80 000 s.
const DAY_QUOTA = {
  RateLimit: '"daily";r=0;t=80000',
  'RateLimit-Policy': '"daily";q=1000;w=86400',
};

/** Answers the next request 200 with the day's quota spent, then 200 plainly. */
function quotaSpent(): void {
  let first = true;
  server.handle = (req, res) => {
    if (!first) return ok(req, res);
    first = false;
    res.writeHead(200, DAY_QUOTA).end('ok');
  };
}

/** Sends one call that reports the quota spent, and returns the paced client. */
async function paced(options: Parameters<typeof withRetry>[1]) {
  quotaSpent();
  const api = withRetry(fetch, { pacing: true, ...options });
  const first = await api(`${server.url}/`);
  expect(first.status).toBe(200);
  return api;
}

describe('a paced wait obeys maxDelayMs and the deadline (item 6)', () => {
  it("beyond maxDelayMs ('throw'): a RetryDelayTooLongError at once, nothing sent", async () => {
    const api = await paced({ maxDelayMs: 1000 });
    const before = server.requests.length;
    // Without the bound, this call would wait 80 000 s; the timeout only keeps a failure short.
    const error = await api(`${server.url}/`, { signal: AbortSignal.timeout(10_000) }).catch(
      (e: unknown) => e,
    );
    expect(isRetryDelayTooLongError(error)).toBe(true);
    const e = error as RetryDelayTooLongError;
    expect(e.maxDelayMs).toBe(1000);
    expect(e.delayMs).toBeGreaterThan(79_000_000);
    expect(e.delayMs).toBeLessThanOrEqual(80_000_000);
    expect(server.requests.length).toBe(before);
  });

  it('a refused wait is not reserved: the next call is not pushed 86.4 s further', async () => {
    const api = await paced({ maxDelayMs: 1000 });
    const a = (await api(`${server.url}/`).catch((e: unknown) => e)) as RetryDelayTooLongError;
    const b = (await api(`${server.url}/`).catch((e: unknown) => e)) as RetryDelayTooLongError;
    expect(b.delayMs).toBeLessThanOrEqual(a.delayMs);
  });

  it("beyond maxDelayMs ('clamp'): waits maxDelayMs, then sends", async () => {
    const api = await paced({ maxDelayMs: 50, onMaxDelay: 'clamp' });
    const before = server.requests.length;
    const res = await api(`${server.url}/`, { signal: AbortSignal.timeout(10_000) });
    expect(res.status).toBe(200);
    expect(server.requests.length).toBe(before + 1);
  });

  it('past the deadline: a RetryDeadlineError at once, carrying the wait', async () => {
    const api = await paced({ maxDelayMs: Number.POSITIVE_INFINITY, deadlineMs: 3000 });
    const before = server.requests.length;
    const error = await api(`${server.url}/`).catch((e: unknown) => e);
    expect(isRetryDeadlineError(error)).toBe(true);
    // The deadline timer's own error says 0: this one was refused before waiting.
    expect((error as RetryDeadlineError).delayMs).toBeGreaterThan(79_000_000);
    expect(server.requests.length).toBe(before);
  });
});

describe('waits and deadlines past a timer’s 2^31 − 1 ms (item 7)', () => {
  it.each([2 ** 31, 2 ** 40, Number.POSITIVE_INFINITY])(
    'deadlineMs %d is accepted and does not fire early',
    async (deadlineMs) => {
      server.handle = (req, res) => {
        setTimeout(() => ok(req, res), 100);
      };
      const res = await fetchWithRetry(`${server.url}/`, undefined, { deadlineMs });
      expect(res.status).toBe(200);
      expect(await retry(() => 'done', { deadlineMs })).toBe('done');
    },
  );

  it('maxDelayMs Infinity and Retry-After 2592000 (30 days): one request, then the wait', async () => {
    server.handle = (_req, res) => {
      res.writeHead(429, { 'Retry-After': '2592000' }).end();
    };
    const before = server.requests.length;
    const controller = new AbortController();
    let planned = 0;
    const call = fetchWithRetry(
      `${server.url}/`,
      { signal: controller.signal },
      {
        maxDelayMs: Number.POSITIVE_INFINITY,
        jitter: 'none',
        onRetry: ({ delayMs }) => {
          planned = delayMs;
        },
      },
    ).catch((e: unknown) => e);
    // An overflowing timer sends the next attempt after 1 ms; give it ample time to show.
    await vi.waitFor(() => expect(planned).toBe(2_592_000_000));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(server.requests.length - before).toBe(1);
    controller.abort('done');
    expect(await call).toBe('done');
  });

  it('a 30-day RetryLater is waited to the millisecond (fake timers)', async () => {
    vi.useFakeTimers();
    const attempts: number[] = [];
    const start = Date.now();
    const call = retry(
      () => {
        attempts.push(Date.now() - start);
        if (attempts.length === 1) throw new RetryLater(2_592_000_000);
        return 'second';
      },
      { maxDelayMs: Number.POSITIVE_INFINITY, jitter: 'none' },
    );
    await vi.advanceTimersByTimeAsync(2 ** 31);
    expect(attempts).toEqual([0]);
    await vi.advanceTimersByTimeAsync(2_592_000_000 - 2 ** 31 - 1);
    expect(attempts).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(await call).toBe('second');
    expect(attempts).toEqual([0, 2_592_000_000]);
  });

  it('a deadline of 2^31 + 1000 ms fires then, not before (fake timers)', async () => {
    vi.useFakeTimers();
    const deadlineMs = 2 ** 31 + 1000;
    let settled: unknown;
    retry(
      ({ signal }) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason)),
        ),
      { deadlineMs },
    ).catch((e: unknown) => {
      settled = e;
    });
    await vi.advanceTimersByTimeAsync(deadlineMs - 1);
    expect(settled).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(isRetryDeadlineError(settled)).toBe(true);
  });

  it.each([
    ['baseDelayMs: Infinity', { baseDelayMs: Number.POSITIVE_INFINITY }],
    ['maxServerJitterMs: Infinity', { maxServerJitterMs: Number.POSITIVE_INFINITY }],
    ['deadlineMs: NaN', { deadlineMs: Number.NaN }],
    ['maxDelayMs: -1', { maxDelayMs: -1 }],
  ])('%s is refused up front (jitter cannot spread an infinite step)', (_name, options) => {
    expect(() => withRetry(fetch, options)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });
});
