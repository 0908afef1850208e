// An option the client does not take throws INVALID_OPTION before anything runs, as the server
// side's options do; another retry library's name for one of ours says which one.
import { describe, expect, it } from 'vitest';
import {
  createPacer,
  createRetryBudget,
  fetchWithRetry,
  isRetryError,
  retry,
  withRetry,
} from '../src/index.js';

/** The RetryError a call threw (synchronously or as a rejection). */
async function thrown(call: () => unknown): Promise<{ code: string; message: string }> {
  try {
    await call();
  } catch (error) {
    expect(isRetryError(error)).toBe(true);
    return error as { code: string; message: string };
  }
  throw new Error('expected a RetryError');
}

const never = (() => {
  throw new Error('no request may be made');
}) as unknown as typeof fetch;

describe('unknown options', () => {
  it.each([
    ['maxRetries', 'retries'],
    ['limit', 'retries'],
    ['minTimeout', 'baseDelayMs'],
    ['maxTimeout', 'maxBackoffMs'],
    ['statusCodes', 'statuses'],
    ['onFailedAttempt', 'onRetry'],
  ])('%s throws with the Floodgate option to use', async (name, ours) => {
    const options = { [name]: 5 } as never;
    const expected = (label: string) =>
      `${label}: unknown option "${name}" (Floodgate's way: ${ours})`;
    let e = await thrown(() => withRetry(never, options));
    expect(e.code).toBe('INVALID_OPTION');
    expect(e.message).toContain(expected('withRetry'));
    e = await thrown(() =>
      fetchWithRetry('http://127.0.0.1:9/', undefined, { fetch: never, ...(options as object) }),
    );
    expect(e.message).toContain(expected('fetchWithRetry'));
    let calls = 0;
    e = await thrown(() => retry(() => calls++, options));
    expect(e.message).toContain(expected('retry'));
    expect(calls).toBe(0);
  });

  it('names each function’s own options, and a typo without a hint', async () => {
    // retry() takes no statuses; withRetry takes no shouldRetry; only fetchWithRetry a fetch.
    expect((await thrown(() => retry(() => 1, { statuses: [429] } as never))).message).toBe(
      'retry: unknown option "statuses"',
    );
    // serverDelay reads a response: fetch's, not retry()'s.
    expect(
      (await thrown(() => retry(() => 1, { serverDelay: () => undefined } as never))).message,
    ).toBe('retry: unknown option "serverDelay"');
    expect(
      (await thrown(() => withRetry(never, { shouldRetry: () => true } as never))).message,
    ).toBe('withRetry: unknown option "shouldRetry"');
    expect((await thrown(() => withRetry(never, { fetch: never } as never))).message).toBe(
      'withRetry: unknown option "fetch"',
    );
    expect((await thrown(() => withRetry(never, { retires: 2 } as never))).message).toBe(
      'withRetry: unknown option "retires"',
    );
    expect((await thrown(() => createRetryBudget({ maxToken: 5 } as never))).message).toBe(
      'RetryBudget: unknown option "maxToken"',
    );
    expect((await thrown(() => createPacer({ maxOrigin: 5 } as never))).message).toBe(
      'Pacer: unknown option "maxOrigin"',
    );
  });

  it('every option the types name is taken', async () => {
    const budget = createRetryBudget({ maxTokens: 5, tokenRatio: 0.5 });
    const pacer = createPacer({ maxOrigins: 5 });
    const common = {
      retries: 1,
      baseDelayMs: 1,
      maxBackoffMs: 10,
      jitter: 'none',
      maxServerJitterMs: 0,
      maxDelayMs: 100,
      onMaxDelay: 'clamp',
      deadlineMs: 1000,
      signal: new AbortController().signal,
      budget,
      onRetry: () => {},
      random: Math.random,
    } as const;
    withRetry(never, { ...common, statuses: [429], methods: ['GET'], pacing: pacer });
    const ok = async () => new Response('ok');
    const res = await fetchWithRetry('http://127.0.0.1:9/', undefined, {
      ...common,
      statuses: [429],
      methods: ['GET'],
      pacing: false,
      fetch: ok,
    });
    expect(res.status).toBe(200);
    expect(await retry(() => 7, { ...common, shouldRetry: () => false })).toBe(7);
  });
});
