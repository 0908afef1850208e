import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createRetryBudget,
  fetchWithRetry,
  isRetryDeadlineError,
  isRetryDelayTooLongError,
  isRetryError,
  RetryDelayTooLongError,
  type RetryEvent,
  withRetry,
} from '../src/index.js';
import { ok, refuseFirst, startServer, type TestServer } from './server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Requests the server saw during `run`. */
async function counted<T>(run: () => Promise<T>): Promise<{ result: T; requests: number }> {
  const before = server.requests.length;
  const result = await run();
  return { result, requests: server.requests.length - before };
}

describe('what is retried', () => {
  it('429 and 503 are retried, the wait as the server asked', async () => {
    for (const [status, seconds] of [
      [429, 1],
      [503, 0],
    ] as const) {
      server.handle = refuseFirst({ 'Retry-After': String(seconds) }, 1, status);
      const started = Date.now();
      const { result, requests } = await counted(() => fetchWithRetry(`${server.url}/`));
      expect(result.status).toBe(200);
      expect(requests).toBe(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(seconds * 1000);
    }
  });

  it('other statuses are answered at once', async () => {
    server.handle = refuseFirst({ 'Retry-After': '1' }, 1, 500);
    const { result, requests } = await counted(() => fetchWithRetry(`${server.url}/`));
    expect(result.status).toBe(500);
    expect(requests).toBe(1);
  });

  it('POST and PATCH are not retried by default', async () => {
    for (const method of ['POST', 'PATCH']) {
      server.handle = refuseFirst({ 'Retry-After': '0' });
      const { result, requests } = await counted(() =>
        fetchWithRetry(`${server.url}/`, { method, body: 'x' }),
      );
      expect(result.status).toBe(429);
      expect(requests).toBe(1);
    }
  });

  it('POST is retried with an Idempotency-Key, or when opted in', async () => {
    server.handle = refuseFirst({ 'Retry-After': '0' });
    const keyed = await counted(() =>
      fetchWithRetry(`${server.url}/`, {
        method: 'POST',
        body: 'x',
        headers: { 'Idempotency-Key': 'k1' },
      }),
    );
    expect([keyed.result.status, keyed.requests]).toEqual([200, 2]);
    server.handle = refuseFirst({ 'Retry-After': '0' });
    const optedIn = await counted(() =>
      fetchWithRetry(`${server.url}/`, { method: 'POST', body: 'x' }, { methods: ['POST'] }),
    );
    expect([optedIn.result.status, optedIn.requests]).toEqual([200, 2]);
  });

  it('a Request with a body is replayed whole', async () => {
    const bodies: string[] = [];
    let seen = 0;
    server.handle = (req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        bodies.push(body);
        seen += 1;
        if (seen === 1) res.writeHead(503, { 'Retry-After': '0' }).end();
        else ok(req, res);
      });
    };
    const res = await fetchWithRetry(
      new Request(`${server.url}/`, { method: 'PUT', body: 'payload' }),
    );
    expect(res.status).toBe(200);
    expect(bodies).toEqual(['payload', 'payload']);
  });

  it('network errors are retried for GET, not for POST', async () => {
    let seen = 0;
    server.handle = (req, res) => {
      seen += 1;
      if (seen === 1) req.socket.destroy();
      else ok(req, res);
    };
    const events: RetryEvent[] = [];
    const res = await fetchWithRetry(`${server.url}/`, undefined, {
      onRetry: (e) => {
        events.push(e);
      },
    });
    expect(res.status).toBe(200);
    expect(events.map((e) => [e.reason, e.source])).toEqual([['network-error', 'backoff']]);
    expect(events[0]?.error).toBeInstanceOf(TypeError);

    server.handle = (req) => req.socket.destroy();
    const { requests } = await counted(() =>
      fetchWithRetry(`${server.url}/`, { method: 'POST', body: 'x' }).catch((e) => e),
    );
    expect(requests).toBe(1);
  });

  it('when retries run out, the last response is returned with its body', async () => {
    server.handle = refuseFirst({ 'Retry-After': '0' }, 99);
    const { result, requests } = await counted(() =>
      fetchWithRetry(`${server.url}/`, undefined, { retries: 2, jitter: 'none' }),
    );
    expect(result.status).toBe(429);
    expect(await result.text()).toBe('slow down');
    expect(requests).toBe(3);
  });
});

describe('maxDelayMs', () => {
  it("'throw' (default): a typed error with the delay and the response", async () => {
    server.handle = refuseFirst({ 'Retry-After': '120' });
    const error = await fetchWithRetry(`${server.url}/`).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RetryDelayTooLongError);
    expect(isRetryDelayTooLongError(error)).toBe(true);
    expect(isRetryDeadlineError(error)).toBe(false);
    const e = error as RetryDelayTooLongError;
    expect([e.code, e.delayMs, e.maxDelayMs, e.attempt]).toEqual([
      'DELAY_TOO_LONG',
      120_000,
      60_000,
      1,
    ]);
    expect(e.response?.status).toBe(429);
    expect(await e.response?.text()).toBe('slow down');
  });

  it('the type guards recognise an error from another copy of the package', () => {
    const cjs = createRequire(import.meta.url)('../dist/index.cjs');
    const foreign = new cjs.RetryDelayTooLongError({ delayMs: 5, maxDelayMs: 1, attempt: 1 });
    expect(foreign).not.toBeInstanceOf(RetryDelayTooLongError);
    expect(isRetryError(foreign)).toBe(true);
    expect(isRetryDelayTooLongError(foreign)).toBe(true);
    expect(isRetryError(new Error('x'))).toBe(false);
    expect(isRetryError({ name: 'RetryError', code: 'DELAY_TOO_LONG' })).toBe(false);
  });

  it("'clamp': waits maxDelayMs and tries again", async () => {
    server.handle = refuseFirst({ 'Retry-After': '120' });
    const events: RetryEvent[] = [];
    const started = Date.now();
    const res = await fetchWithRetry(`${server.url}/`, undefined, {
      maxDelayMs: 300,
      onMaxDelay: 'clamp',
      onRetry: (e) => {
        events.push(e);
      },
    });
    expect(res.status).toBe(200);
    expect(events.map((e) => [e.serverDelayMs, e.delayMs])).toEqual([[120_000, 300]]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
  });
});

describe('deadline', () => {
  it('a wait that would end past the deadline is not started', async () => {
    server.handle = refuseFirst({ 'Retry-After': '1' }, 99);
    const started = Date.now();
    const error = await fetchWithRetry(`${server.url}/`, undefined, {
      deadlineMs: 1500,
      jitter: 'none',
    }).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(isRetryDeadlineError(error)).toBe(true);
    // One wait of 1 s fits; the second would end at 2 s, so had it started, the call would
    // have taken 2 s at least (the margin is for two requests on a loaded machine).
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    expect(elapsed).toBeLessThan(2000);
    expect((error as { response?: Response }).response?.status).toBe(429);
  });

  it('an attempt still running at the deadline is aborted', async () => {
    server.handle = () => undefined; // never answers
    const started = Date.now();
    const error = await fetchWithRetry(`${server.url}/`, undefined, { deadlineMs: 300 }).catch(
      (e: unknown) => e,
    );
    expect(isRetryDeadlineError(error)).toBe(true);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('retry budget', () => {
  it('an instance stops retrying below half its budget and earns it back on success', async () => {
    const budget = createRetryBudget({ maxTokens: 4, tokenRatio: 0.5 });
    const client = withRetry(fetch, { budget, baseDelayMs: 1, retries: 5 });
    server.handle = (_req, res) => res.writeHead(503).end();

    const first = await counted(() => client(`${server.url}/`));
    // Tokens 4 -> 3 -> 2: at half, no more retries.
    expect([first.result.status, first.requests, budget.tokens]).toEqual([503, 3, 2]);
    const second = await counted(() => client(`${server.url}/`));
    expect(second.requests).toBe(1);

    server.handle = ok;
    await client(`${server.url}/`);
    await client(`${server.url}/`);
    expect(budget.tokens).toBe(3);
    server.handle = refuseFirst({}, 1, 503);
    const third = await counted(() => client(`${server.url}/`));
    expect([third.result.status, third.requests]).toEqual([200, 2]);
  });

  it('withRetry gives each instance a budget of its own by default', async () => {
    server.handle = (_req, res) => res.writeHead(503).end();
    const a = withRetry(fetch, { baseDelayMs: 1, retries: 20 });
    const b = withRetry(fetch, { baseDelayMs: 1, retries: 20 });
    // The default (10 tokens) allows 5 retries before reaching half.
    expect((await counted(() => a(`${server.url}/`))).requests).toBe(6);
    expect((await counted(() => a(`${server.url}/`))).requests).toBe(1);
    expect((await counted(() => b(`${server.url}/`))).requests).toBe(6);
  });
});

describe('response bodies of retried attempts are released', () => {
  it('an endless 429 body is cancelled before the retry', async () => {
    let firstClosed = false;
    let closedBeforeRetry = false;
    let seen = 0;
    server.handle = (req, res) => {
      seen += 1;
      if (seen === 1) {
        res.on('close', () => {
          firstClosed = true;
        });
        res.writeHead(429, { 'Retry-After': '1' });
        const chunk = Buffer.alloc(64 * 1024, 120);
        const pump = (): void => {
          while (!res.destroyed && res.write(chunk)) {}
          if (!res.destroyed) res.once('drain', pump);
        };
        pump();
      } else {
        closedBeforeRetry = firstClosed;
        ok(req, res);
      }
    };
    const res = await fetchWithRetry(`${server.url}/`, undefined, { jitter: 'none' });
    expect(res.status).toBe(200);
    expect(closedBeforeRetry).toBe(true);
  });
});

describe('options are checked before any request', () => {
  it.each([
    { retries: -1 },
    { retries: 1.5 },
    { maxDelayMs: -5 },
    { baseDelayMs: Number.NaN },
    { jitter: 'some' },
    { onMaxDelay: 'wait' },
    { budget: {} },
    { statuses: ['429'] },
    { pacing: 'yes' },
    { pacing: {} },
    { serverDelay: 5 },
  ])('%j', async (options) => {
    expect(() => withRetry(fetch, options as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
    const { result } = await counted(() =>
      fetchWithRetry(`${server.url}/`, undefined, options as never).catch((e: unknown) => e),
    );
    expect(isRetryError(result)).toBe(true);
  });

  it('a signal already aborted rejects without a request', async () => {
    const reason = new Error('stop');
    const { result, requests } = await counted(() =>
      fetchWithRetry(`${server.url}/`, { signal: AbortSignal.abort(reason) }).catch((e) => e),
    );
    expect(result).toBe(reason);
    expect(requests).toBe(0);
  });
});
