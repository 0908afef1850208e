// The token-aware pacer's arithmetic with a pinned clock; model-apis-pacing.test.ts runs it
// against a real server that enforces requests and tokens per minute.
import { describe, expect, it } from 'vitest';
import { isRetryError } from '../src/index.js';
import {
  createModelApiPacer,
  estimateTokens,
  type ModelApiPacer,
} from '../src/model-apis/index.js';

const O = 'https://api.openai.com';
const T = 1_000_000;
const openai = (requests: [number, number, string], tokens: [number, number, string]) =>
  new Headers({
    'x-ratelimit-limit-requests': String(requests[0]),
    'x-ratelimit-remaining-requests': String(requests[1]),
    'x-ratelimit-reset-requests': requests[2],
    'x-ratelimit-limit-tokens': String(tokens[0]),
    'x-ratelimit-remaining-tokens': String(tokens[1]),
    'x-ratelimit-reset-tokens': tokens[2],
  });
/** A pacer whose calls weigh what their URL's `?t=` says. */
const byUrl = () =>
  createModelApiPacer({ tokens: (input) => Number(new URL(String(input)).searchParams.get('t')) });
const call = (pacer: ModelApiPacer, tokens: number, now = T, max?: number) =>
  pacer.reserve(O, now, max, `${O}/v1/chat/completions?t=${tokens}`, undefined);

describe('ModelApiPacer', () => {
  it('knows nothing at first: no wait', () => {
    expect(call(byUrl(), 5000).waitMs).toBe(0);
  });

  it('spends the tokens left at once, then holds calls until the tokens’ reset', () => {
    const pacer = byUrl();
    pacer.observe(O, call(pacer, 100).seq, openai([60, 59, '1s'], [6000, 1000, '5s']), T);
    expect([400, 400, 200].map((t) => call(pacer, t).waitMs)).toEqual([0, 0, 0]);
    // 1000 reported, 1000 reserved since: the next call waits until the limit is whole again.
    expect(call(pacer, 1).waitMs).toBe(5000);
  });

  it('requests per minute hold too, whatever the tokens', () => {
    const pacer = byUrl();
    pacer.observe(O, call(pacer, 1).seq, openai([60, 2, '20s'], [6000, 6000, '0s']), T);
    expect([1, 1, 1].map((t) => call(pacer, t).waitMs)).toEqual([0, 0, 20_000]);
  });

  it('calls leave in the order they were reserved: a small one does not overtake a large one', () => {
    const pacer = byUrl();
    pacer.observe(O, call(pacer, 10).seq, openai([60, 50, '1s'], [6000, 500, '3s']), T);
    expect(call(pacer, 2000).waitMs).toBe(3000);
    expect(call(pacer, 10).waitMs).toBe(3000);
  });

  it('past the whole limit, the refill rate the headers showed', () => {
    const pacer = byUrl();
    // 4000 of 6000 to refill in 2 s: 2 tokens a ms.
    pacer.observe(O, call(pacer, 10).seq, openai([60, 59, '1s'], [6000, 2000, '2s']), T);
    expect(call(pacer, 2000).waitMs).toBe(0); // what was left
    // At the reset: the whole limit, less the 2000 reserved since the response.
    expect(call(pacer, 4000).waitMs).toBe(2000);
    expect(call(pacer, 1000).waitMs).toBe(2500); // 1000 more at 2 a ms
  });

  it('a call larger than the whole limit goes when the limit is whole: the server decides', () => {
    const pacer = byUrl();
    pacer.observe(O, call(pacer, 10).seq, openai([60, 59, '1s'], [6000, 6000, '0s']), T);
    expect(call(pacer, 50_000).waitMs).toBe(0);
  });

  it('calls in flight when a response is read count against what it reported', () => {
    const pacer = byUrl();
    const a = call(pacer, 100);
    const b = call(pacer, 700); // sent before a's answer arrives
    pacer.observe(O, a.seq, openai([60, 58, '2s'], [6000, 1000, '5s']), T);
    expect(call(pacer, 300).waitMs).toBe(0);
    expect(call(pacer, 1).waitMs).toBe(5000);
    // b's own answer then says what it left: 300 - 300 = nothing before the reset either.
    pacer.observe(O, b.seq, openai([60, 57, '2s'], [6000, 300, '5s']), T);
    expect(call(pacer, 1).waitMs).toBe(5000);
  });

  it('an earlier call’s report, read late, counts only where it leaves less', () => {
    const pacer = byUrl();
    const a = call(pacer, 10);
    const b = call(pacer, 10);
    const c = call(pacer, 10);
    pacer.observe(O, c.seq, openai([60, 50, '1s'], [6000, 5000, '1s']), T);
    // a's report says more is left than c's: older, it is ignored.
    pacer.observe(O, a.seq, openai([60, 55, '1s'], [6000, 5990, '1s']), T);
    expect(call(pacer, 4990, T).waitMs).toBe(0);
    // b's says less: the server admitted b after c (they were sent together), so it is taken.
    pacer.observe(O, b.seq, openai([60, 49, '3s'], [6000, 4000, '3s']), T);
    expect(call(pacer, 10, T).waitMs).toBe(3000);
  });

  it('a call sent just before the reported one counts as not in the report until answered', () => {
    const pacer = byUrl();
    const early = call(pacer, 500, T - 5000); // long before: surely admitted first
    const racing = call(pacer, 700, T - 10); // alongside the reported call
    const reported = call(pacer, 10, T);
    pacer.observe(O, reported.seq, openai([60, 50, '1s'], [6000, 1000, '9s']), T);
    expect(early.waitMs + racing.waitMs).toBe(0);
    // 1000 left, less the racing call's 700 (it may have been admitted after), not the early
    // one's: 300, and not one more.
    expect(call(pacer, 300, T).waitMs).toBe(0);
    expect(call(pacer, 1, T).waitMs).toBe(9000);
  });

  it('a wait beyond maxWaitMs is not reserved and does not hold back the next call', () => {
    const pacer = byUrl();
    pacer.observe(O, call(pacer, 10).seq, openai([60, 59, '1s'], [6000, 0, '9s']), T);
    expect(call(pacer, 10, T, 1000)).toEqual({ waitMs: 9000, seq: 0 });
    expect(call(pacer, 10, T, 9000).waitMs).toBe(9000);
  });

  it('after a reset of a limit of unknown size, forgets it until a response says more', () => {
    const pacer = byUrl();
    const headers = new Headers({
      'x-ratelimit-remaining-tokens': '0',
      'x-ratelimit-reset-tokens': '2s',
    });
    pacer.observe(O, call(pacer, 10).seq, headers, T);
    expect(call(pacer, 10).waitMs).toBe(2000);
    expect(call(pacer, 10, T + 2000).waitMs).toBe(0);
    expect(call(pacer, 10, T + 2000).waitMs).toBe(0);
  });

  it('paces each model on its own (the default key is the origin and the body’s model)', () => {
    const pacer = createModelApiPacer({ tokens: () => 100 });
    const send = (model: string) =>
      pacer.reserve(O, T, undefined, `${O}/v1/chat/completions`, {
        method: 'POST',
        body: JSON.stringify({ model, messages: [] }),
      });
    pacer.observe(O, send('gpt-4o').seq, openai([60, 0, '30s'], [6000, 5000, '1s']), T);
    expect(send('gpt-4o').waitMs).toBe(30_000);
    expect(send('gpt-4o-mini').waitMs).toBe(0);
  });
});

describe('ModelApiPacer with Anthropic’s headers', () => {
  const A = 'https://api.anthropic.com';
  const at = (ms: number) => new Date(ms).toISOString();
  /** Anthropic's headers at `now`; input and output as [remaining, ms to their reset]. */
  const anthropic = (now: number, input: [string, number], output: [string, number]) =>
    new Headers({
      date: new Date(now).toUTCString(),
      'anthropic-ratelimit-requests-limit': '50',
      'anthropic-ratelimit-requests-remaining': '49',
      'anthropic-ratelimit-requests-reset': at(now + 1000),
      'anthropic-ratelimit-tokens-limit': '8000',
      'anthropic-ratelimit-tokens-remaining': output[0],
      'anthropic-ratelimit-tokens-reset': at(now + output[1]),
      'anthropic-ratelimit-input-tokens-limit': '40000',
      'anthropic-ratelimit-input-tokens-remaining': input[0],
      'anthropic-ratelimit-input-tokens-reset': at(now + input[1]),
      'anthropic-ratelimit-output-tokens-limit': '8000',
      'anthropic-ratelimit-output-tokens-remaining': output[0],
      'anthropic-ratelimit-output-tokens-reset': at(now + output[1]),
    });
  const split = (input: number, output: number) =>
    createModelApiPacer({ key: () => A, tokens: () => ({ input, output }) });
  const N = 1_704_067_200_000; // 2024-01-01T00:00:00Z, whole seconds for the Date header

  it('input and output tokens are budgets apart; the combined `tokens` is not charged twice', () => {
    const pacer = split(3000, 700);
    pacer.observe(
      A,
      pacer.reserve(A, N, undefined, A, undefined).seq,
      anthropic(N, ['10000', 4000], ['2000', 6000]),
      N,
    );
    // Input: 10000 (as little as 9500) holds three calls of 3000. Output: 2000, rounded to the
    // nearest thousand, is read as 1500: two calls of 700 fit. `tokens` (also 2000) is not
    // charged the 3700 of each call on top.
    const waits = [1, 2, 3].map(() => pacer.reserve(A, N, undefined, A, undefined).waitMs);
    expect(waits).toEqual([0, 0, 6000]);
  });

  it('without input and output headers, the combined `tokens` is charged input plus output', () => {
    const pacer = split(400, 300);
    const headers = new Headers({
      date: new Date(N).toUTCString(),
      'anthropic-ratelimit-tokens-limit': '8000',
      'anthropic-ratelimit-tokens-remaining': '2000', // read as 1500
      'anthropic-ratelimit-tokens-reset': at(N + 7000),
    });
    pacer.observe(A, pacer.reserve(A, N, undefined, A, undefined).seq, headers, N);
    const waits = [1, 2, 3].map(() => pacer.reserve(A, N, undefined, A, undefined).waitMs);
    expect(waits).toEqual([0, 0, 7000]);
  });

  it('remaining tokens rounded to a thousand are read as up to 500 fewer', () => {
    const pacer = split(0, 600);
    pacer.observe(
      A,
      pacer.reserve(A, N, undefined, A, undefined).seq,
      anthropic(N, ['40000', 0], ['1000', 5000]),
      N,
    );
    // 1000 may be as little as 500: a call of 600 waits for the reset.
    expect(pacer.reserve(A, N, undefined, A, undefined).waitMs).toBe(5000);
  });

  it('a local clock an hour off changes nothing: resets are read against Date', () => {
    const pacer = split(3000, 700);
    const local = N + 3_600_000;
    pacer.observe(
      A,
      pacer.reserve(A, local, undefined, A, undefined).seq,
      anthropic(N, ['10000', 4000], ['0', 6000]),
      local,
    );
    expect(pacer.reserve(A, local, undefined, A, undefined).waitMs).toBe(6000);
  });
});

describe('estimateTokens and the options', () => {
  it('a token per 4 characters of the body in, the cap it asks for out', () => {
    const body = JSON.stringify({ model: 'm', max_completion_tokens: 300, messages: [] });
    expect(estimateTokens(O, { body })).toEqual({ input: Math.ceil(body.length / 4), output: 300 });
    expect(estimateTokens(O, { body: 'not json' })).toEqual({ input: 2, output: 0 });
    expect(estimateTokens(O, undefined)).toEqual({ input: 0, output: 0 });
  });

  it('refuses unknown options and bad values up front, and a bad count at the call', () => {
    for (const options of [{ token: () => 1 }, { tokens: 5 }, { maxKeys: 0 }]) {
      expect(() => createModelApiPacer(options as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION' }),
      );
    }
    const pacer = createModelApiPacer({ tokens: () => Number.NaN });
    let error: unknown;
    try {
      pacer.reserve(O, T, undefined, O, undefined);
    } catch (e) {
      error = e;
    }
    expect(isRetryError(error)).toBe(true);
  });
});
