// The wait a refused model-API response asks for: which header wins when several are sent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RetryEvent, withRetry } from '../src/index.js';
import { modelApiDelay } from '../src/model-apis/index.js';
import { refuseFirst, startServer, type TestServer } from './server.js';

const T = Date.UTC(2024, 0, 1, 0, 0, 0);
const HTTP_DATE = 'Mon, 01 Jan 2024 00:00:00 GMT';
const delay = (headers: Record<string, string>, now = T) =>
  modelApiDelay(new Headers(headers), now);

// OpenAI's documented sample (rate limits guide, "Rate limits in headers"), tokens spent.
const OPENAI_SPENT = {
  'x-ratelimit-limit-requests': '60',
  'x-ratelimit-limit-tokens': '150000',
  'x-ratelimit-remaining-requests': '59',
  'x-ratelimit-remaining-tokens': '0',
  'x-ratelimit-reset-requests': '1s',
  'x-ratelimit-reset-tokens': '6m0s',
};
// Anthropic's documented headers (rate limits page, "Response headers"), output tokens spent.
const ANTHROPIC_SPENT = {
  date: HTTP_DATE,
  'anthropic-ratelimit-requests-limit': '50',
  'anthropic-ratelimit-requests-remaining': '49',
  'anthropic-ratelimit-requests-reset': '2024-01-01T00:00:02Z',
  'anthropic-ratelimit-output-tokens-limit': '8000',
  'anthropic-ratelimit-output-tokens-remaining': '0',
  'anthropic-ratelimit-output-tokens-reset': '2024-01-01T00:00:30Z',
};

describe('modelApiDelay: precedence', () => {
  it('retry-after-ms beats retry-after (openai-node reads it first)', () => {
    expect(delay({ 'retry-after-ms': '1500', 'retry-after': '2', ...OPENAI_SPENT })).toEqual({
      delayMs: 1500,
      source: 'retry-after-ms',
    });
  });

  it('retry-after beats the provider’s reset, which is when the limit is whole, later', () => {
    expect(delay({ 'retry-after': '2', ...OPENAI_SPENT })).toEqual({
      delayMs: 2000,
      source: 'retry-after',
    });
    expect(delay({ 'retry-after': '5', ...ANTHROPIC_SPENT })).toEqual({
      delayMs: 5000,
      source: 'retry-after',
    });
  });

  it('an HTTP-date Retry-After is read against the response’s Date', () => {
    const headers = { date: HTTP_DATE, 'retry-after': 'Mon, 01 Jan 2024 00:00:07 GMT' };
    expect(delay(headers, T + 3_600_000)).toEqual({ delayMs: 7000, source: 'retry-after' });
  });

  it('without them, the reset of the spent limit', () => {
    expect(delay(OPENAI_SPENT)).toEqual({ delayMs: 360_000, source: 'openai-ratelimit' });
    expect(delay(ANTHROPIC_SPENT, T - 3_600_000)).toEqual({
      delayMs: 30_000,
      source: 'anthropic-ratelimit',
    });
  });

  it('of several spent limits, the longest reset: the call passes once all have refilled', () => {
    const headers = { ...OPENAI_SPENT, 'x-ratelimit-remaining-requests': '0' };
    expect(delay(headers)?.delayMs).toBe(360_000);
    const short = { ...headers, 'x-ratelimit-reset-tokens': '500ms' };
    expect(delay(short)?.delayMs).toBe(1000);
  });

  it('none spent (a call larger than what is left): the one closest to running out', () => {
    const headers = {
      ...OPENAI_SPENT,
      'x-ratelimit-remaining-tokens': '900',
      'x-ratelimit-reset-tokens': '59.64s',
    };
    expect(delay(headers)).toEqual({ delayMs: 59_640, source: 'openai-ratelimit' });
  });

  it('provider headers beat RateLimit; RateLimit and the rest still work without them', () => {
    const rateLimit = { ratelimit: '"api";r=0;t=12' };
    expect(delay({ ...rateLimit, ...OPENAI_SPENT })?.source).toBe('openai-ratelimit');
    expect(delay(rateLimit)).toEqual({ delayMs: 12_000, source: 'ratelimit-draft-8' });
    expect(delay({ 'x-ratelimit-reset': '4' })).toEqual({
      delayMs: 4000,
      source: 'x-ratelimit-reset',
    });
    expect(delay({})).toBeUndefined();
  });

  it.each(['soon', '-5', '', '1e3', 'Infinity', '1,5'])(
    'a retry-after-ms of %j is skipped, not thrown',
    (value) => {
      expect(delay({ 'retry-after-ms': value, 'retry-after': '3' })).toEqual({
        delayMs: 3000,
        source: 'retry-after',
      });
    },
  );

  it('retry-after-ms with a fraction rounds up', () => {
    expect(delay({ 'retry-after-ms': '20.2' })?.delayMs).toBe(21);
  });

  it('provider headers with no reset that can be read fall through', () => {
    expect(
      delay({ 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': 'soon' }),
    ).toBeUndefined();
  });
});

describe('modelApiDelay through withRetry, from a real server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  /** The first retry's event, for a 429 with `headers`; the hook aborts the wait. */
  async function firstRetry(headers: Record<string, string>, reader = true): Promise<RetryEvent> {
    server.handle = refuseFirst(headers);
    const controller = new AbortController();
    let event: RetryEvent | undefined;
    const api = withRetry(fetch, {
      jitter: 'none',
      methods: ['POST'],
      maxDelayMs: Number.POSITIVE_INFINITY,
      ...(reader ? { serverDelay: modelApiDelay } : {}),
      onRetry: (e) => {
        event = e;
        controller.abort(new Error('seen'));
      },
    });
    await api(`${server.url}/v1/messages`, {
      method: 'POST',
      body: '{}',
      signal: controller.signal,
    }).catch(() => undefined);
    if (!event) throw new Error('the client did not retry');
    return event;
  }

  it('honours retry-after-ms, and the provider reset, as server delays', async () => {
    let e = await firstRetry({ 'retry-after-ms': '1500', 'retry-after': '2' });
    expect([e.source, e.serverDelayMs, e.delayMs]).toEqual(['retry-after-ms', 1500, 1500]);
    e = await firstRetry(OPENAI_SPENT);
    expect([e.source, e.serverDelayMs]).toEqual(['openai-ratelimit', 360_000]);
    // Anthropic's instants against a Date that is now, so that the real clock does not matter.
    const now = new Date(Date.now() + 1000);
    now.setUTCMilliseconds(0);
    const at = (s: number) => new Date(now.getTime() + s * 1000).toISOString().replace('.000', '');
    e = await firstRetry({
      ...ANTHROPIC_SPENT,
      date: now.toUTCString(),
      'anthropic-ratelimit-output-tokens-reset': at(30),
    });
    expect([e.source, e.serverDelayMs]).toEqual(['anthropic-ratelimit', 30_000]);
  });

  it('without the reader, the default one knows none of these', async () => {
    const e = await firstRetry({ 'retry-after-ms': '1500', ...OPENAI_SPENT }, false);
    expect(e.source).toBe('backoff');
  });

  it('jitter is added on top, as for any server delay, never taken off', async () => {
    server.handle = refuseFirst({ 'retry-after-ms': '1500' });
    const controller = new AbortController();
    let event: RetryEvent | undefined;
    const api = withRetry(fetch, {
      serverDelay: modelApiDelay,
      random: () => 0.5,
      maxServerJitterMs: 1000,
      onRetry: (e) => {
        event = e;
        controller.abort(new Error('seen'));
      },
    });
    await api(`${server.url}/`, { signal: controller.signal }).catch(() => undefined);
    expect([event?.serverDelayMs, event?.delayMs]).toEqual([1500, 2000]);
  });
});
