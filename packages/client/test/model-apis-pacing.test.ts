// A paced batch against a server that enforces requests and tokens per minute (scaled down):
// zero 429s, in both providers' header sets, and the batch is held to the limit, not under it.
import { afterEach, describe, expect, it } from 'vitest';
import { type FetchLike, withRetry } from '../src/index.js';
import { createModelApiPacer, modelApiDelay } from '../src/model-apis/index.js';
import { goDuration, type ModelApiServer, startModelApiServer } from './model-api-server.js';

let server: ModelApiServer | undefined;
afterEach(() => server?.close());

/** A fixed scramble in [0, 1), so that every run sends the same batch. */
function scramble(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

interface Call {
  readonly promptChars: number;
  readonly maxTokens: number;
}

/** `count` calls with prompts of `chars` characters and `max_tokens` of `out`, in those ranges. */
interface Phase {
  readonly count: number;
  readonly chars: readonly [number, number];
  readonly out: readonly [number, number];
}

/** The calls of each phase in turn, of varied sizes (the same on every run). */
function batch(...phases: Phase[]): Call[] {
  const r = scramble(42);
  const between = ([lo, hi]: readonly [number, number]) => Math.round(lo + r() * (hi - lo));
  return phases.flatMap((p) =>
    Array.from({ length: p.count }, () => ({
      promptChars: between(p.chars),
      maxTokens: between(p.out),
    })),
  );
}

// Each phase makes one limit bind: tokens (OpenAI) or input, then output tokens (Anthropic),
// then requests.
const OPENAI_BATCH = batch(
  { count: 24, chars: [400, 1600], out: [200, 300] },
  { count: 40, chars: [20, 200], out: [10, 40] },
);
const ANTHROPIC_BATCH = batch(
  { count: 15, chars: [6000, 14_000], out: [50, 100] },
  { count: 15, chars: [20, 200], out: [600, 1000] },
  { count: 40, chars: [20, 200], out: [10, 40] },
);
const OPENAI_LIMITS = { requests: 20, tokens: 6000 };
const ANTHROPIC_LIMITS = { requests: 20, input: 20_000, output: 6000 };
const PERIOD_MS = 2000;

/** The batch through `client`, `concurrency` calls at a time, as a job runner would send it. */
async function run(client: FetchLike, url: string, calls: readonly Call[], concurrency: number) {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < calls.length) {
      const call = calls[next++] as Call;
      const res = await client(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'test-model',
          max_tokens: call.maxTokens,
          messages: [{ role: 'user', content: 'x'.repeat(call.promptChars) }],
        }),
      });
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * What the limits imply: a bucket that starts whole admits `limit` plus `limit` per period, so
 * admitting `total` takes at least (total - limit) / limit periods between first and last.
 */
function leastSpanMs(total: number, limit: number, periodMs: number): number {
  return Math.max(0, ((total - limit) / limit) * periodMs);
}

const paced = () =>
  withRetry(fetch, {
    pacing: createModelApiPacer(),
    serverDelay: modelApiDelay,
    methods: ['POST'],
    retries: 3,
  });

describe('a paced batch against a model API that enforces RPM and TPM', () => {
  it('OpenAI-style headers (x-ratelimit-*, Go durations): zero 429s, at the limit', async () => {
    server = await startModelApiServer({
      style: 'openai',
      periodMs: PERIOD_MS,
      limits: OPENAI_LIMITS,
    });
    await run(paced(), `${server.url}/v1/chat/completions`, OPENAI_BATCH, 4);
    expect(server.statuses).toHaveLength(OPENAI_BATCH.length);
    expect(server.statuses.filter((s) => s === 429)).toHaveLength(0);
    atTheLimit(server, OPENAI_LIMITS);
  }, 60_000);

  it('Anthropic-style headers (RFC 3339, rounded counts, a clock an hour off): zero 429s', async () => {
    // The server's clock runs an hour ahead: its resets are only right against its Date.
    server = await startModelApiServer({
      style: 'anthropic',
      periodMs: PERIOD_MS,
      limits: ANTHROPIC_LIMITS,
      clockSkewMs: 3_600_000,
    });
    await run(paced(), `${server.url}/v1/messages`, ANTHROPIC_BATCH, 4);
    expect(server.statuses).toHaveLength(ANTHROPIC_BATCH.length);
    expect(server.statuses.filter((s) => s === 429)).toHaveLength(0);
    atTheLimit(server, ANTHROPIC_LIMITS);
  }, 60_000);

  it.each(['openai', 'anthropic'] as const)(
    'without pacing the same %s batch is refused (so the tests above can fail)',
    async (style) => {
      const limits = style === 'openai' ? OPENAI_LIMITS : ANTHROPIC_LIMITS;
      server = await startModelApiServer({ style, periodMs: PERIOD_MS, limits });
      const calls = style === 'openai' ? OPENAI_BATCH : ANTHROPIC_BATCH;
      await run(withRetry(fetch, { retries: 0 }), `${server.url}/`, calls, 4);
      expect(server.statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    },
  );
});

/**
 * The batch ran at the limits, not under them: each limit was spent to half or less at some
 * point (a pacer that spread calls evenly would keep them nearly whole); and the batch needed
 * more than twice each limit, so it was throttled: the time between the first and the last
 * admission is at least what the limits imply. (No upper bound on time: the machine may be busy.)
 */
function atTheLimit(
  s: ModelApiServer,
  limits: Partial<Record<keyof ModelApiServer['charged'], number>>,
) {
  const span = s.span.last - s.span.first;
  for (const [dim, limit] of Object.entries(limits) as [
    keyof ModelApiServer['charged'],
    number,
  ][]) {
    expect(s.lowestShare[dim], dim).toBeLessThanOrEqual(0.5);
    expect(s.charged[dim], dim).toBeGreaterThan(2 * limit);
    expect(span, dim).toBeGreaterThanOrEqual(leastSpanMs(s.charged[dim], limit, PERIOD_MS) - 1);
  }
}

describe('the test server', () => {
  it('writes durations as Go does', () => {
    expect([0, 9, 999, 1000, 1500, 360_000, 3_723_500].map(goDuration)).toEqual([
      '0s',
      '9ms',
      '999ms',
      '1s',
      '1.5s',
      '6m0s',
      '1h2m3.5s',
    ]);
  });
});
