// Real servers only: a throw-away redis-server, the fake model on a loopback port, the gateway in
// front of it, and requests over real sockets. Token buckets of a day or a minute, so that what
// refills while a test runs is less than one token (or is bounded by the time measured).
import { type RedisServer, startRedisServer } from '@floodgate/testkit/redis';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
// @ts-expect-error -- plain .mjs without declarations; the example has no build step on purpose.
import { makeCalls, readCompletion, runBatch } from '../src/batch.mjs';
// @ts-expect-error -- see above
import { startFakeModel, usageFor } from '../src/fake-model.mjs';
// @ts-expect-error -- see above
import { startGateway } from '../src/gateway.mjs';

interface Settled {
  identity: string;
  outcome: 'completed' | 'aborted' | 'upstream-error';
  estimate: number;
  actual: number;
}
interface PolicyView {
  name: string;
  remaining: number;
  allowed: boolean;
}
interface Gateway {
  url: string;
  stats: { admitted: number; denied: number; estimated: number; charged: number };
  peek(apiKey: string): Promise<{ allowed: boolean; policies: PolicyView[] }>;
  close(): Promise<void>;
}
interface FakeModel {
  url: string;
  settings: { stallAfterTokens: number | undefined };
  calls: Array<{ stream: boolean; sent: number; closedEarly: boolean }>;
  close(): Promise<void>;
}

let redis: RedisServer;
let model: FakeModel;
let gateway: Gateway | undefined;
let settled: Settled[] = [];
let waiters: Array<() => void> = [];
let run = 0;

beforeAll(async () => {
  redis = await startRedisServer();
  model = await startFakeModel();
});
afterAll(async () => {
  await model?.close();
  await redis?.stop();
});
afterEach(async () => {
  model.settings.stallAfterTokens = undefined;
  await gateway?.close();
  gateway = undefined;
});

/** A gateway of its own per test (its own prefix), recording every settle. */
async function start(
  limits: { requests: number; tokens: number; interval: string },
  options: { defaultMaxTokens?: number } = {},
): Promise<Gateway> {
  settled = [];
  waiters = [];
  gateway = (await startGateway({
    redisUrl: redis.url,
    modelUrl: model.url,
    limits,
    prefix: `llm-test-${++run}`,
    onSettled: (e: Settled) => {
      settled.push(e);
      for (const w of waiters.splice(0)) w();
    },
    ...options,
  })) as Gateway;
  return gateway;
}

/** Resolves once `n` settles have been reported. */
function settles(n: number): Promise<Settled[]> {
  return new Promise((resolve) => {
    const check = () => (settled.length >= n ? resolve(settled.slice()) : waiters.push(check));
    check();
  });
}

function chat(
  g: Gateway,
  apiKey: string,
  body: Record<string, unknown>,
  init: RequestInit = {},
): Promise<Response> {
  return fetch(`${g.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({ model: 'fake-model', ...body }),
    ...init,
  });
}

const user = (content: string) => [{ role: 'user', content }];
/** 40 characters: 10 prompt tokens; the fake model answers 20. */
const PROMPT_40 = 'Name three rivers that turn a mill wheel';

async function tokensLeft(g: Gateway, apiKey: string): Promise<number> {
  const d = await g.peek(apiKey);
  return d.policies.find((p) => p.name === 'tokens')?.remaining ?? Number.NaN;
}

describe('the gateway charges what the model used', () => {
  it('a streamed call is charged its real total_tokens, not the estimate', async () => {
    expect(PROMPT_40).toHaveLength(40);
    // 1000 tokens a day: less than a token refills while the test runs.
    const g = await start({ requests: 100, tokens: 1000, interval: '1d' });
    const key = 'sk-stream';
    const res = await chat(g, key, { stream: true, max_tokens: 100, messages: user(PROMPT_40) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    // Admitted against the estimate: 10 prompt + 100 max_tokens.
    expect(res.headers.get('x-ratelimit-limit-tokens')).toBe('1000');
    expect(res.headers.get('x-ratelimit-remaining-tokens')).toBe('890');
    expect(res.headers.get('x-ratelimit-limit-requests')).toBe('100');
    expect(res.headers.get('x-ratelimit-remaining-requests')).toBe('99');
    expect(res.headers.get('x-ratelimit-reset-tokens')).toMatch(/^\d+m[\d.]+s$|^\d+h\d+m[\d.]+s$/);
    expect(res.headers.get('ratelimit')).toContain('"tokens";r=890');
    const answer = await readCompletion(res, true);
    expect(answer.chunks).toBe(20);
    // The client did not ask for usage: the gateway asked the model for it, and kept it.
    expect(answer.usage).toBeUndefined();
    // The settle is done before the stream ends: 10 + 20 = 30 tokens, 80 of the estimate back.
    expect(settled).toEqual([
      { identity: expect.any(String), outcome: 'completed', estimate: 110, actual: 30 },
    ]);
    expect(await tokensLeft(g, key)).toBe(970);
    const next = await chat(g, key, { max_tokens: 100, messages: user(PROMPT_40) });
    expect(next.status).toBe(200);
    expect(next.headers.get('x-ratelimit-remaining-tokens')).toBe(String(970 - 110));
    expect((await next.json()).usage).toEqual({
      prompt_tokens: 10,
      completion_tokens: 20,
      total_tokens: 30,
    });
    expect(await tokensLeft(g, key)).toBe(940);
    expect(g.stats).toMatchObject({ admitted: 2, denied: 0, estimated: 220, charged: 60 });
  });

  it('a client that aborts mid-stream is charged the prompt and the tokens sent so far', async () => {
    const g = await start({ requests: 100, tokens: 1000, interval: '1d' });
    const key = 'sk-abort';
    model.settings.stallAfterTokens = 5; // the model writes 5 tokens, then waits
    const abort = new AbortController();
    const res = await chat(
      g,
      key,
      { stream: true, max_tokens: 100, messages: user(PROMPT_40) },
      { signal: abort.signal },
    );
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    let tokens = 0;
    while (tokens < 5) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended early');
      text += decoder.decode(value, { stream: true });
      tokens = (text.match(/"delta":\{"content":"[^"]+"\}/g) ?? []).length;
    }
    expect(tokens).toBe(5);
    abort.abort();
    const [event] = await settles(1);
    expect(event).toMatchObject({ outcome: 'aborted', estimate: 110, actual: 10 + 5 });
    expect(await tokensLeft(g, key)).toBe(1000 - 15);
    // The gateway hung up on the model too, which had written exactly those 5.
    await vi.waitFor(() =>
      expect(model.calls.at(-1)).toMatchObject({ sent: 5, closedEarly: true }),
    );
  });

  it('a call that uses more than its estimate puts the key in debt: the next call gets 429', async () => {
    // 500 tokens a minute: a token every 120 ms. No max_tokens: the gateway estimates 64.
    const g = await start({ requests: 10, tokens: 500, interval: '1m' }, { defaultMaxTokens: 64 });
    const key = 'sk-debt';
    const started = Date.now();
    const long = 'x'.repeat(1200); // 300 prompt tokens; the model answers 600
    const first = await chat(g, key, { messages: user(long) });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining-tokens')).toBe(String(500 - 364));
    expect((await first.json()).usage.total_tokens).toBe(900);
    expect(settled).toMatchObject([{ outcome: 'completed', estimate: 364, actual: 900 }]);
    // 900 charged against 500: 400 below zero. Nothing is left, and no unit would pass.
    const peeked = await g.peek(key);
    expect(peeked.allowed).toBe(false);
    expect(peeked.policies.find((p) => p.name === 'tokens')?.remaining).toBe(0);

    const second = await chat(g, key, { max_tokens: 10, messages: user('Hi') }); // 11 tokens
    const elapsed = Date.now() - started;
    expect(second.status).toBe(429);
    const body = await second.json();
    expect(body.error).toMatchObject({ type: 'tokens', code: 'rate_limit_exceeded' });
    const retryMs = Number(second.headers.get('retry-after-ms'));
    // The bucket must pay back 400 and then hold 11: 411 tokens at 120 ms, less what refilled
    // since the first call was admitted (at most `elapsed`).
    expect(retryMs).toBeLessThanOrEqual(411 * 120);
    expect(retryMs).toBeGreaterThanOrEqual(411 * 120 - elapsed - 1);
    expect(second.headers.get('retry-after')).toBe(String(Math.ceil(retryMs / 1000)));
    expect(second.headers.get('x-ratelimit-remaining-tokens')).toBe('0');
    expect(second.headers.get('x-ratelimit-remaining-requests')).not.toBeNull();
    expect(g.stats).toMatchObject({ admitted: 1, denied: 1, estimated: 364, charged: 900 });
  });
});

describe('a batch paced by @floodgate/client/model-apis', () => {
  const LIMITS = { requests: 6, tokens: 1500, interval: '1s' };
  const CALLS = makeCalls({ count: 20, chars: [100, 400], maxTokens: [50, 150] });
  const expectedTokens = CALLS.reduce(
    (sum: number, c: { prompt: string; maxTokens: number }) =>
      sum + usageFor({ max_tokens: c.maxTokens, messages: user(c.prompt) }).usage.total_tokens,
    0,
  );

  it('sees zero 429s and is charged exactly what the model reported', async () => {
    // The batch needs more than twice each limit, so it has to be paced.
    expect(CALLS.length).toBeGreaterThan(2 * LIMITS.requests);
    expect(expectedTokens).toBeGreaterThan(LIMITS.tokens);
    const g = await start(LIMITS);
    const result = await runBatch({ url: g.url, apiKey: 'sk-batch', calls: CALLS, concurrency: 4 });
    expect(result.refused).toBe(0);
    expect(result.ok).toBe(CALLS.length);
    expect(result.tokens).toBe(expectedTokens);
    expect(g.stats).toMatchObject({ admitted: CALLS.length, denied: 0, charged: expectedTokens });
  });

  it('the same batch without pacing is refused (so the test above can fail)', async () => {
    const g = await start(LIMITS);
    const result = await runBatch({ url: g.url, apiKey: 'sk-unpaced', calls: CALLS, paced: false });
    expect(result.refused).toBeGreaterThan(0);
    expect(g.stats.denied).toBe(result.refused);
  });
});
