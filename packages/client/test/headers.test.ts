import { formatRateLimitHeaders } from '@floodgate/core/headers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asctime, decision, denied, firstRetry, rfc850 } from './fixtures.js';
import { startServer, type TestServer } from './server.js';

// A server clock far from ours: dates are read against the server's `Date`, so the client's
// own clock (here off by years) does not matter.
const T0 = Date.UTC(2030, 2, 1, 12, 0, 0);
const DATE = new Date(T0).toUTCString();

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

const draft8 = (policies = [denied('default', 12_000)]) =>
  formatRateLimitHeaders(decision(policies), { standard: 'draft-8' });
const draft7 = () =>
  formatRateLimitHeaders(decision([denied('default', 8_000)]), { standard: 'draft-7' });
const draft6 = () =>
  formatRateLimitHeaders(decision([denied('default', 6_000)]), { standard: 'draft-6' });
const noRetryAfter = (h: Record<string, string>) => {
  const { 'Retry-After': _, ...rest } = h;
  return rest;
};

describe('every header form', () => {
  it.each([
    ['delay-seconds', { 'Retry-After': '7' }, 7000],
    ['delay-seconds with spaces', { 'Retry-After': ' 7 ' }, 7000],
    ['IMF-fixdate', { Date: DATE, 'Retry-After': new Date(T0 + 30_000).toUTCString() }, 30_000],
    ['RFC 850 date', { Date: DATE, 'Retry-After': rfc850(T0 + 45_000) }, 45_000],
    ['asctime date', { Date: DATE, 'Retry-After': asctime(T0 + 20_000) }, 20_000],
    ['Retry-After: 0', { 'Retry-After': '0' }, 0],
  ])('Retry-After as %s', async (_name, headers, expected) => {
    const e = await firstRetry(server, headers);
    expect(e.source).toBe('retry-after');
    expect(e.serverDelayMs).toBe(expected);
    expect(e.delayMs).toBe(expected);
  });

  it('a past HTTP-date means now', async () => {
    const e = await firstRetry(server, { 'Retry-After': 'Sun, 06 Nov 1994 08:49:37 GMT' });
    expect(e).toMatchObject({ source: 'retry-after', serverDelayMs: 0 });
  });

  it('a past HTTP-date against the server clock means now, whatever our clock says', async () => {
    const e = await firstRetry(server, {
      Date: DATE,
      'Retry-After': new Date(T0 - 5000).toUTCString(),
    });
    expect(e).toMatchObject({ source: 'retry-after', serverDelayMs: 0 });
  });

  it('RateLimit draft-8 t (headers from core)', async () => {
    const e = await firstRetry(server, noRetryAfter(draft8()));
    expect(e).toMatchObject({ source: 'ratelimit-draft-8', serverDelayMs: 12_000 });
  });

  it('draft-8 with several policies waits for the longest exhausted one', async () => {
    const h = noRetryAfter(
      draft8([denied('burst', 3000), denied('daily', 50_000), denied('minute', 40_000, 5)]),
    );
    expect(h.RateLimit).toContain('"minute";r=5;t=40');
    const e = await firstRetry(server, h);
    expect(e).toMatchObject({ source: 'ratelimit-draft-8', serverDelayMs: 50_000 });
  });

  it('draft-8 with no exhausted policy takes the one closest to running out', async () => {
    const e = await firstRetry(server, {
      RateLimit: '"hour";r=40;t=3000, "second";r=2;t=1',
    });
    expect(e).toMatchObject({ source: 'ratelimit-draft-8', serverDelayMs: 1000 });
  });

  it('RateLimit draft-7 reset', async () => {
    const e = await firstRetry(server, noRetryAfter(draft7()));
    expect(e).toMatchObject({ source: 'ratelimit-draft-7', serverDelayMs: 8000 });
  });

  it('RateLimit-Reset (draft-6)', async () => {
    const e = await firstRetry(server, noRetryAfter(draft6()));
    expect(e).toMatchObject({ source: 'ratelimit-draft-6', serverDelayMs: 6000 });
  });

  it.each([
    ['delta-seconds', { 'X-RateLimit-Reset': '5' }, 5000],
    [
      'epoch seconds, against the server clock',
      { Date: DATE, 'X-RateLimit-Reset': String(T0 / 1000 + 90) },
      90_000,
    ],
    ['epoch milliseconds', { Date: DATE, 'X-RateLimit-Reset': String(T0 + 2500) }, 2500],
    ['an epoch in the past', { Date: DATE, 'X-RateLimit-Reset': String(T0 / 1000 - 90) }, 0],
    // The smallest epoch-seconds value (Sep 2001), not a delta of 31 years (issue #14 item 8).
    ['exactly 1e9, an epoch long past', { Date: DATE, 'X-RateLimit-Reset': '1000000000' }, 0],
  ])('X-RateLimit-Reset as %s', async (_name, headers, expected) => {
    const e = await firstRetry(server, headers);
    expect(e).toMatchObject({ source: 'x-ratelimit-reset', serverDelayMs: expected });
  });

  it('a refusal without any delay falls back to backoff', async () => {
    const e = await firstRetry(server, {});
    expect(e.source).toBe('backoff');
    expect(e.serverDelayMs).toBeUndefined();
    expect(e.delayMs).toBe(200);
  });
});

describe('precedence', () => {
  it('Retry-After beats every RateLimit form', async () => {
    const headers = {
      ...draft8(),
      'RateLimit-Reset': '6',
      'X-RateLimit-Reset': '5',
      'Retry-After': '3',
    };
    const e = await firstRetry(server, headers);
    expect(e).toMatchObject({ source: 'retry-after', serverDelayMs: 3000 });
  });

  it('draft-8 beats draft-6 and legacy', async () => {
    const headers = {
      ...noRetryAfter(draft8()),
      ...noRetryAfter(draft6()),
      'X-RateLimit-Reset': '5',
    };
    const e = await firstRetry(server, headers);
    expect(e).toMatchObject({ source: 'ratelimit-draft-8', serverDelayMs: 12_000 });
  });

  it('draft-6 beats legacy', async () => {
    const headers = { ...noRetryAfter(draft6()), 'X-RateLimit-Reset': '5' };
    const e = await firstRetry(server, headers);
    expect(e).toMatchObject({ source: 'ratelimit-draft-6', serverDelayMs: 6000 });
  });
});

describe('exotic and broken headers are ignored, never thrown', () => {
  it.each([
    'soon',
    '-5',
    '1.5',
    '1e3',
    '0x10',
    '',
    'Sun, 31 Feb 2030 12:00:00 GMT',
    'Sun, 06 Nov 1994 25:49:37 GMT',
    'Sun, 06 Nov 1994 08:49:37 PST',
    '99999999999999999999',
    'Tomorrow',
  ])('Retry-After %j falls through to the next source', async (value) => {
    const e = await firstRetry(server, { 'Retry-After': value, 'X-RateLimit-Reset': '4' });
    expect(e).toMatchObject({ source: 'x-ratelimit-reset', serverDelayMs: 4000 });
  });

  it.each([
    '"default";r=0;t=abc',
    '"default";r=0;t=-3',
    '"default";r=0;t=1.5',
    'garbage ;;; ,,,',
    '"unterminated;r=0;t=9',
    'limit=10, remaining=0, reset=-1',
  ])('RateLimit %j falls through', async (value) => {
    const e = await firstRetry(server, { RateLimit: value, 'RateLimit-Reset': '2' });
    expect(e).toMatchObject({ source: 'ratelimit-draft-6', serverDelayMs: 2000 });
  });

  it.each(['-1', 'soon', '1.5', '1e3'])(
    'X-RateLimit-Reset %j gives way to backoff',
    async (value) => {
      const e = await firstRetry(server, { 'X-RateLimit-Reset': value });
      expect(e.source).toBe('backoff');
    },
  );

  it('a broken Date header leaves the local clock in charge', async () => {
    const at = new Date(Date.now() + 60_000).toUTCString();
    const e = await firstRetry(server, { Date: 'yesterday-ish', 'Retry-After': at });
    expect(e.source).toBe('retry-after');
    expect(e.serverDelayMs).toBeGreaterThan(55_000);
    expect(e.serverDelayMs).toBeLessThanOrEqual(60_000);
  });
});
