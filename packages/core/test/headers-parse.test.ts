import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RateLimitStandard } from '../src/headers/index.js';
import { formatRateLimitHeaders, parseRateLimitHeaders } from '../src/headers/index.js';
import type { PolicyDecision } from '../src/types.js';
import { decisionOf, policy } from './headers-fixtures.js';

const NOW = Date.UTC(2025, 0, 1);

describe('parseRateLimitHeaders: each form', () => {
  it('draft-8: the member with the smallest r, with q and w from its policy', () => {
    const parsed = parseRateLimitHeaders({
      RateLimit: '"daily";r=900;t=3600, "burst";r=4;t=1',
      'RateLimit-Policy': '"burst";q=10;w=1, "daily";q=1000;w=86400',
    });
    expect(parsed).toEqual({
      source: 'draft-8',
      policy: 'burst',
      limit: 10,
      remaining: 4,
      resetSeconds: 1,
      windowSeconds: 1,
    });
  });

  it('draft-8: accepts token names, and breaks ties towards the longer reset', () => {
    const parsed = parseRateLimitHeaders({ ratelimit: 'a;r=0;t=5, b;r=0;t=30, c;r=0' });
    expect(parsed).toEqual({ source: 'draft-8', policy: 'b', remaining: 0, resetSeconds: 30 });
  });

  it('draft-8: drops malformed members but keeps the good ones', () => {
    const parsed = parseRateLimitHeaders({
      RateLimit: '"x";r=-1;t=1, "y";r=1.5, "z";r=2;t=-4, ("inner");r=0, 7;r=0, "ok";r=3;t=9',
    });
    expect(parsed).toEqual({ source: 'draft-8', policy: 'ok', remaining: 3, resetSeconds: 9 });
  });

  it('draft-8: reads the SF integer -0 as a plain 0', () => {
    expect(parseRateLimitHeaders({ RateLimit: '"p";r=-0;t=-0' })?.remaining).toBe(0);
    expect(parseRateLimitHeaders({ RateLimit: '"p";r=-0;t=-0' })?.resetSeconds).toBe(0);
  });

  it('draft-7', () => {
    const parsed = parseRateLimitHeaders({
      RateLimit: 'limit=100, remaining=42, reset=17',
      'RateLimit-Policy': '10;w=1, 100;w=60',
    });
    expect(parsed).toEqual({
      source: 'draft-7',
      limit: 100,
      remaining: 42,
      resetSeconds: 17,
      windowSeconds: 60,
    });
  });

  it('draft-6', () => {
    const parsed = parseRateLimitHeaders({
      'RateLimit-Limit': '100',
      'RateLimit-Remaining': '0',
      'RateLimit-Reset': '30',
    });
    expect(parsed).toEqual({ source: 'draft-6', limit: 100, remaining: 0, resetSeconds: 30 });
  });

  it('legacy with a delta reset', () => {
    const parsed = parseRateLimitHeaders({
      'X-RateLimit-Limit': '60',
      'X-RateLimit-Remaining': '59',
      'X-RateLimit-Reset': '45',
    });
    expect(parsed).toEqual({ source: 'legacy', limit: 60, remaining: 59, resetSeconds: 45 });
  });

  it('legacy with an epoch-seconds reset, converted with the injected now', () => {
    const epoch = NOW / 1000 + 90;
    const h = { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(epoch) };
    expect(parseRateLimitHeaders(h, NOW)).toEqual({
      source: 'legacy',
      remaining: 0,
      resetSeconds: 90,
    });
    // A fraction of a second before the reset still rounds up to a whole second.
    expect(parseRateLimitHeaders(h, NOW + 89_500)?.resetSeconds).toBe(1);
    expect(parseRateLimitHeaders(h, NOW + 3_600_000)?.resetSeconds).toBe(0);
  });

  it('legacy: 1e9 itself is already epoch seconds; one less is still a delta', () => {
    const reset = (value: string) =>
      parseRateLimitHeaders({ 'X-RateLimit-Reset': value }, NOW)?.resetSeconds;
    // 1e9 s is Sep 2001, long past at NOW: the quota has reset, no 31-year wait.
    expect(reset('1000000000')).toBe(0);
    expect(reset('1000000001')).toBe(0);
    expect(reset('999999999')).toBe(999_999_999);
    // At a now just before 1e9 s, 1e9 reads as the second ahead.
    expect(
      parseRateLimitHeaders({ 'X-RateLimit-Reset': '1000000000' }, 1e12 - 500)?.resetSeconds,
    ).toBe(1);
  });
});

describe('parseRateLimitHeaders: precedence and inputs', () => {
  const all = {
    RateLimit: '"p";r=1;t=2',
    'RateLimit-Limit': '30',
    'RateLimit-Remaining': '3',
    'X-RateLimit-Remaining': '4',
  };

  it('prefers draft-8 > draft-7 > draft-6 > legacy', () => {
    expect(parseRateLimitHeaders(all)?.source).toBe('draft-8');
    const d7 = { ...all, RateLimit: 'limit=5, remaining=2, reset=1' };
    expect(parseRateLimitHeaders(d7)?.source).toBe('draft-7');
    const { RateLimit: _, ...d6 } = all;
    expect(parseRateLimitHeaders(d6)).toEqual({ source: 'draft-6', limit: 30, remaining: 3 });
    expect(parseRateLimitHeaders({ 'X-RateLimit-Remaining': '4' })?.source).toBe('legacy');
  });

  it('falls through a malformed RateLimit to the older forms', () => {
    const parsed = parseRateLimitHeaders({ ...all, RateLimit: '"p";r=?;t=2,,' });
    expect(parsed?.source).toBe('draft-6');
  });

  it('matches names case-insensitively', () => {
    expect(parseRateLimitHeaders({ RATELIMIT: '"p";r=1' })?.remaining).toBe(1);
    expect(parseRateLimitHeaders({ 'x-ratelimit-remaining': '4' })?.remaining).toBe(4);
    expect(parseRateLimitHeaders([['rAtElImIt-ReMaInInG', '6']])?.remaining).toBe(6);
  });

  it('reads a fetch Headers object', () => {
    const h = new Headers({ 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '1' });
    expect(parseRateLimitHeaders(h)).toEqual({ source: 'legacy', limit: 10, remaining: 1 });
    h.append('RateLimit', '"a";r=5');
    h.append('RateLimit', '"b";r=2');
    expect(parseRateLimitHeaders(h)).toEqual({ source: 'draft-8', policy: 'b', remaining: 2 });
  });

  it('reads records with arrays, numbers and undefined, and [name, value] pairs', () => {
    const record = {
      ratelimit: ['"a";r=5;t=1', '"b";r=2;t=3'],
      'ratelimit-policy': undefined,
      'x-ratelimit-limit': 10,
    };
    expect(parseRateLimitHeaders(record)).toEqual({
      source: 'draft-8',
      policy: 'b',
      remaining: 2,
      resetSeconds: 3,
    });
    const pairs = new Map([['X-RateLimit-Limit', '10']]);
    expect(parseRateLimitHeaders(pairs)).toEqual({ source: 'legacy', limit: 10 });
    expect(parseRateLimitHeaders({ 'x-ratelimit-limit': 10 })).toEqual({
      source: 'legacy',
      limit: 10,
    });
  });
});

describe('parseRateLimitHeaders: malformed input', () => {
  const bad = ['', 'abc', '-1', '1.5', '1e3', '0x10', '99999999999999999999', '5, 5', '"5"', '?1'];

  it.each(bad)('ignores %j in every numeric field', (value) => {
    const h = {
      'RateLimit-Limit': value,
      'RateLimit-Remaining': value,
      'RateLimit-Reset': value,
      'X-RateLimit-Limit': value,
      'X-RateLimit-Remaining': value,
      'X-RateLimit-Reset': value,
    };
    expect(parseRateLimitHeaders(h)).toBeUndefined();
  });

  it.each([
    '',
    'garbage',
    '"p"',
    '"p";r=-1',
    '"p";r=1.5;t=1',
    '"p";r=1;t=1.5',
    '"p";r=9999999999999999',
    'limit=-1, remaining=abc',
    'limit=(1 2), remaining="3"',
    '"unterminated;r=1',
  ])('ignores RateLimit %j when nothing else is present', (value) => {
    expect(parseRateLimitHeaders({ RateLimit: value })).toBeUndefined();
  });

  it('keeps the fields it can read and drops the others', () => {
    const parsed = parseRateLimitHeaders({
      RateLimit: 'limit=100, remaining=-2, reset=10',
    });
    expect(parsed).toEqual({ source: 'draft-7', limit: 100, resetSeconds: 10 });
  });

  it('never throws, whatever it is given', () => {
    const hostile = Object.defineProperty({}, 'ratelimit', {
      enumerable: true,
      get() {
        throw new Error('boom');
      },
    });
    // biome-ignore lint/suspicious/noExplicitAny: simulating untyped callers
    const inputs: any[] = [hostile, null, undefined, 42, 'RateLimit', [1, 2], [[1, '2']], {}];
    for (const input of inputs) {
      expect(() => parseRateLimitHeaders(input)).not.toThrow();
      expect(parseRateLimitHeaders(input)).toBeUndefined();
    }
  });
});

describe('round trip: format then parse gives the same numbers', () => {
  const arbPolicy = fc.record({
    name: fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/),
    limit: fc.integer({ min: 1, max: 1_000_000 }),
    remaining: fc.integer({ min: 0, max: 1_000_000 }),
    windowMs: fc.integer({ min: 1, max: 86_400_000 * 30 }),
    resetAfterMs: fc.integer({ min: 0, max: 86_400_000 * 30 }),
    retryAfterMs: fc.integer({ min: 0, max: 86_400_000 * 30 }),
    allowed: fc.boolean(),
  });
  const arbPolicies = fc.uniqueArray(arbPolicy, {
    minLength: 1,
    maxLength: 4,
    selector: (p) => p.name,
  });
  const secs = (ms: number) => Math.ceil(ms / 1000);
  const resetOf = (p: PolicyDecision) =>
    secs(p.allowed ? p.resetAfterMs : Math.max(p.resetAfterMs, p.retryAfterMs));

  it('draft-8: the binding member and its policy', () => {
    fc.assert(
      fc.property(arbPolicies, (raw) => {
        const policies = raw.map((p) => policy(p));
        const parsed = parseRateLimitHeaders(formatRateLimitHeaders(decisionOf(policies)));
        const minR = Math.min(...policies.map((p) => p.remaining));
        const tied = policies.filter((p) => p.remaining === minR);
        const maxT = Math.max(...tied.map(resetOf));
        const bound = tied.find((p) => resetOf(p) === maxT)!;
        expect(parsed).toEqual({
          source: 'draft-8',
          policy: bound.name,
          limit: bound.limit,
          remaining: bound.remaining,
          resetSeconds: maxT,
          windowSeconds: secs(bound.windowMs),
        });
      }),
    );
  });

  it.each<[RateLimitStandard | 'legacy']>([['draft-7'], ['draft-6'], ['legacy']])(
    '%s: limit, remaining and reset',
    (form) => {
      fc.assert(
        fc.property(arbPolicies, (raw) => {
          const decision = decisionOf(raw.map((p) => policy(p)));
          const standard = form === 'legacy' ? 'draft-6' : form;
          let headers = formatRateLimitHeaders(decision, { standard, legacy: true });
          if (form === 'legacy') {
            headers = Object.fromEntries(
              Object.entries(headers).filter(([k]) => k.startsWith('X-')),
            );
          }
          const parsed = parseRateLimitHeaders(headers, NOW);
          expect(parsed?.source).toBe(form);
          expect(parsed?.limit).toBe(decision.limit);
          expect(parsed?.remaining).toBe(decision.remaining);
          const reset = Number(headers['X-RateLimit-Reset']);
          expect(parsed?.resetSeconds).toBe(reset);
          const binding = decision.policies.filter(
            (p) => p.remaining === decision.remaining && p.limit === decision.limit,
          );
          const expected = Math.max(...binding.map(resetOf));
          expect(reset).toBe(
            decision.allowed ? expected : Math.max(expected, secs(decision.retryAfterMs)),
          );
        }),
      );
    },
  );
});
