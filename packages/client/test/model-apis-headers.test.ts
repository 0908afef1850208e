// Reading model APIs' rate-limit headers, from the values the providers document.
import { describe, expect, it } from 'vitest';
import { parseModelRateLimits } from '../src/model-apis/index.js';

const T = Date.UTC(2024, 0, 1, 0, 0, 0); // 2024-01-01T00:00:00Z
const HTTP_DATE = 'Mon, 01 Jan 2024 00:00:00 GMT';

describe('OpenAI: x-ratelimit-*', () => {
  // The sample values of the table "Rate limits in headers" in OpenAI's rate limits guide,
  // https://platform.openai.com/docs/guides/rate-limits#rate-limits-in-headers
  const DOCUMENTED = {
    'x-ratelimit-limit-requests': '60',
    'x-ratelimit-limit-tokens': '150000',
    'x-ratelimit-remaining-requests': '59',
    'x-ratelimit-remaining-tokens': '149984',
    'x-ratelimit-reset-requests': '1s',
    'x-ratelimit-reset-tokens': '6m0s',
  };

  it('reads the documented example', () => {
    expect(parseModelRateLimits(new Headers(DOCUMENTED), T)).toEqual({
      provider: 'openai',
      requests: { limit: 60, remaining: 59, resetMs: 1000 },
      tokens: { limit: 150000, remaining: 149984, resetMs: 360_000 },
    });
  });

  it.each([
    // Go's time.Duration.String(), which these headers are written with: the guide's `1s` and
    // `6m0s`, and the forms it takes below a second and above an hour.
    ['1s', 1000],
    ['6m0s', 360_000],
    ['20ms', 20],
    ['12ms', 12],
    ['1h2m3.5s', 3_723_500],
    ['1.5s', 1500],
    ['0s', 0],
    ['2m', 120_000],
    ['100us', 1], // rounded up: a wait read short comes back too early
    ['250µs', 1],
    ['1500ns', 1],
    [' 6m0s ', 360_000],
    // Without a unit: seconds (Azure OpenAI has been seen sending `0`).
    ['0', 0],
    ['30', 30_000],
  ])('reset %j is %i ms', (value, ms) => {
    const headers = new Headers({ 'x-ratelimit-reset-tokens': value });
    expect(parseModelRateLimits(headers, T)?.tokens?.resetMs).toBe(ms);
  });

  it.each(['', 'soon', '-1s', '1d', '6m0', '1 s', 's', '1e3s', 'Mon, 01 Jan 2024 00:00:30 GMT'])(
    'reset %j cannot be read: absent',
    (value) => {
      const headers = new Headers({
        'x-ratelimit-remaining-tokens': '10',
        'x-ratelimit-reset-tokens': value,
      });
      expect(parseModelRateLimits(headers, T)).toEqual({
        provider: 'openai',
        tokens: { remaining: 10 },
      });
    },
  );

  it('Azure OpenAI’s -1 (no figure) is absent, as is any count that is not digits', () => {
    const headers = new Headers({
      'x-ratelimit-limit-tokens': '-1',
      'x-ratelimit-remaining-tokens': '-1',
      'x-ratelimit-reset-tokens': '0',
      'x-ratelimit-remaining-requests': '1.5',
    });
    expect(parseModelRateLimits(headers, T)).toEqual({
      provider: 'openai',
      tokens: { resetMs: 0 },
    });
  });

  it('durations need no clock: the Date header changes nothing', () => {
    const headers = new Headers({ ...DOCUMENTED, date: 'Mon, 01 Jan 2024 05:00:00 GMT' });
    expect(parseModelRateLimits(headers, T)?.tokens?.resetMs).toBe(360_000);
  });

  it('a response without any of them reads as undefined', () => {
    expect(parseModelRateLimits(new Headers({ 'x-ratelimit-reset': '30' }), T)).toBeUndefined();
    expect(parseModelRateLimits(new Headers(), T)).toBeUndefined();
  });
});

describe('Anthropic: anthropic-ratelimit-*', () => {
  // Every header of the table "Response headers" in Anthropic's rate limits page,
  // https://docs.anthropic.com/en/api/rate-limits#response-headers. The table gives no sample
  // values, so these are of the forms it describes: counts, token counts "rounded to the nearest
  // thousand", resets "provided in RFC 3339 format" (`2024-01-01T00:00:30Z`), `retry-after` in
  // seconds; `tokens` is the most restrictive of input and output.
  const DOCUMENTED = {
    date: HTTP_DATE,
    'anthropic-ratelimit-requests-limit': '50',
    'anthropic-ratelimit-requests-remaining': '49',
    'anthropic-ratelimit-requests-reset': '2024-01-01T00:00:02Z',
    'anthropic-ratelimit-tokens-limit': '48000',
    'anthropic-ratelimit-tokens-remaining': '8000',
    'anthropic-ratelimit-tokens-reset': '2024-01-01T00:00:50Z',
    'anthropic-ratelimit-input-tokens-limit': '40000',
    'anthropic-ratelimit-input-tokens-remaining': '39000',
    'anthropic-ratelimit-input-tokens-reset': '2024-01-01T00:00:01Z',
    'anthropic-ratelimit-output-tokens-limit': '8000',
    'anthropic-ratelimit-output-tokens-remaining': '0',
    'anthropic-ratelimit-output-tokens-reset': '2024-01-01T00:00:30Z',
    'retry-after': '30',
  };

  it('reads every limit of the documented set, resets against the response’s Date', () => {
    expect(parseModelRateLimits(new Headers(DOCUMENTED), T)).toEqual({
      provider: 'anthropic',
      requests: { limit: 50, remaining: 49, resetMs: 2000 },
      tokens: { limit: 48000, remaining: 8000, resetMs: 50_000 },
      inputTokens: { limit: 40000, remaining: 39000, resetMs: 1000 },
      outputTokens: { limit: 8000, remaining: 0, resetMs: 30_000 },
    });
  });

  it.each([
    ['an hour ahead', 3_600_000],
    ['an hour behind', -3_600_000],
    ['a few seconds ahead', 4321],
  ])('a local clock %s reads the same resets (skew corrected by Date)', (_name, skew) => {
    const limits = parseModelRateLimits(new Headers(DOCUMENTED), T + skew);
    expect(limits?.outputTokens?.resetMs).toBe(30_000);
    expect(limits?.requests?.resetMs).toBe(2000);
  });

  it('without a readable Date, the local clock stands in', () => {
    const { date: _, ...noDate } = DOCUMENTED;
    expect(parseModelRateLimits(new Headers(noDate), T + 10_000)?.outputTokens?.resetMs).toBe(
      20_000,
    );
    const garbled = new Headers({ ...noDate, date: 'yesterday' });
    expect(parseModelRateLimits(garbled, T + 10_000)?.outputTokens?.resetMs).toBe(20_000);
  });

  it.each([
    ['2024-01-01T00:00:30Z', 30_000],
    ['2024-01-01t00:00:30z', 30_000],
    ['2024-01-01 00:00:30Z', 30_000],
    ['2024-01-01T00:00:30.250Z', 30_250],
    ['2024-01-01T00:00:30.0001Z', 30_001], // a fraction of a ms rounds up
    ['2024-01-01T01:00:30+01:00', 30_000],
    ['2023-12-31T23:30:30-00:30', 30_000],
    ['2023-12-31T23:59:59Z', 0], // past: whole already
    ['2023-12-31T23:59:60Z', 0], // a leap second
  ])('reset %j is %i ms after Date', (value, ms) => {
    const headers = new Headers({ date: HTTP_DATE, 'anthropic-ratelimit-requests-reset': value });
    expect(parseModelRateLimits(headers, T)?.requests?.resetMs).toBe(ms);
  });

  it.each([
    '2024-02-30T00:00:00Z',
    '2024-13-01T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:60:00Z',
    '2024-01-01T00:00:30',
    '2024-01-01T00:00:30+0100',
    '2024-01-01',
    'Mon, 01 Jan 2024 00:00:30 GMT',
    '30',
    '30s',
  ])('reset %j cannot be read: absent', (value) => {
    const headers = new Headers({
      date: HTTP_DATE,
      'anthropic-ratelimit-requests-remaining': '3',
      'anthropic-ratelimit-requests-reset': value,
    });
    expect(parseModelRateLimits(headers, T)).toEqual({
      provider: 'anthropic',
      requests: { remaining: 3 },
    });
  });

  it('a response with both kinds is read as Anthropic’s', () => {
    const headers = new Headers({
      'x-ratelimit-remaining-requests': '5',
      'anthropic-ratelimit-requests-remaining': '7',
    });
    expect(parseModelRateLimits(headers, T)).toEqual({
      provider: 'anthropic',
      requests: { remaining: 7 },
    });
  });
});
