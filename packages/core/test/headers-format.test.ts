import { describe, expect, it } from 'vitest';
import { formatRateLimitHeaders } from '../src/headers/index.js';
import { decisionOf, policy } from './headers-fixtures.js';

const allowed = decisionOf([policy()]);
const denied = decisionOf([
  policy({ allowed: false, remaining: 0, resetAfterMs: 500, retryAfterMs: 1_500 }),
]);
const twoPolicies = decisionOf([
  policy({ name: 'burst', limit: 10, windowMs: 1_000, remaining: 4, resetAfterMs: 600 }),
  policy({ name: 'daily', limit: 1000, windowMs: 86_400_000, remaining: 900 }),
]);

describe('formatRateLimitHeaders: draft-8 (default)', () => {
  it('emits one quoted member per policy with r/t and q/w', () => {
    expect(formatRateLimitHeaders(allowed)).toEqual({
      RateLimit: '"default";r=99;t=60',
      'RateLimit-Policy': '"default";q=100;w=60',
    });
  });

  it('lists every policy in order', () => {
    const h = formatRateLimitHeaders(twoPolicies, { standard: 'draft-8' });
    expect(h.RateLimit).toBe('"burst";r=4;t=1, "daily";r=900;t=60');
    expect(h['RateLimit-Policy']).toBe('"burst";q=10;w=1, "daily";q=1000;w=86400');
  });

  it('never gives a denied policy a t before its retry time', () => {
    const h = formatRateLimitHeaders(denied);
    expect(h.RateLimit).toBe('"default";r=0;t=2');
    expect(h['Retry-After']).toBe('2');
  });

  it('escapes quotes and replaces non-ASCII in names instead of throwing', () => {
    const d = decisionOf([policy({ name: 'per "user" – ключ' })]);
    expect(formatRateLimitHeaders(d).RateLimit).toBe('"per \\"user\\" ? ????";r=99;t=60');
  });

  it('stands in a "default" policy without w when the decision has no policies', () => {
    const d = { ...allowed, policies: [] };
    expect(formatRateLimitHeaders(d)).toEqual({
      RateLimit: '"default";r=99;t=60',
      'RateLimit-Policy': '"default";q=100',
    });
  });
});

describe('formatRateLimitHeaders: draft-7 and draft-6', () => {
  it('draft-7 is a dictionary plus limit;w policies', () => {
    expect(formatRateLimitHeaders(allowed, { standard: 'draft-7' })).toEqual({
      RateLimit: 'limit=100, remaining=99, reset=60',
      'RateLimit-Policy': '100;w=60',
    });
  });

  it('draft-6 uses three separate integer fields', () => {
    expect(formatRateLimitHeaders(allowed, { standard: 'draft-6' })).toEqual({
      'RateLimit-Limit': '100',
      'RateLimit-Remaining': '99',
      'RateLimit-Reset': '60',
      'RateLimit-Policy': '100;w=60',
    });
  });

  it('reports the binding policy reset, not the longest one', () => {
    const h = formatRateLimitHeaders(twoPolicies, { standard: 'draft-7' });
    expect(h.RateLimit).toBe('limit=10, remaining=4, reset=1');
    expect(h['RateLimit-Policy']).toBe('10;w=1, 1000;w=86400');
  });

  it('stretches the reset of a denied decision to its retry time', () => {
    const h = formatRateLimitHeaders(denied, { standard: 'draft-6' });
    expect(h['RateLimit-Reset']).toBe('2');
    expect(h['Retry-After']).toBe('2');
  });

  it('rejects an unknown standard from untyped callers', () => {
    // biome-ignore lint/suspicious/noExplicitAny: simulating a JavaScript caller
    expect(() => formatRateLimitHeaders(allowed, { standard: 'draft-5' as any })).toThrow(
      expect.objectContaining({ code: 'INVALID_OPTION' }),
    );
  });
});

describe('formatRateLimitHeaders: legacy and Retry-After', () => {
  it('adds X-RateLimit-* as delta-seconds only when asked', () => {
    expect(formatRateLimitHeaders(allowed)['X-RateLimit-Reset']).toBeUndefined();
    const h = formatRateLimitHeaders(allowed, { legacy: true });
    expect(h['X-RateLimit-Limit']).toBe('100');
    expect(h['X-RateLimit-Remaining']).toBe('99');
    expect(h['X-RateLimit-Reset']).toBe('60');
    expect(h.RateLimit).toBe('"default";r=99;t=60');
  });

  it('sends Retry-After only on denial', () => {
    expect(formatRateLimitHeaders(allowed)).not.toHaveProperty('Retry-After');
    expect(formatRateLimitHeaders(denied, { standard: 'draft-7' })['Retry-After']).toBe('2');
  });

  it('adds jitter to Retry-After only, through the injected random', () => {
    const opts = { retryAfterJitterMs: 10_000 };
    expect(formatRateLimitHeaders(denied, { ...opts, random: () => 0 })['Retry-After']).toBe('2');
    const late = formatRateLimitHeaders(denied, { ...opts, random: () => 0.999 });
    expect(late['Retry-After']).toBe('12');
    expect(late.RateLimit).toBe('"default";r=0;t=2');
  });

  it('clamps negative, fractional and absurd numbers into valid integers', () => {
    const d = decisionOf([
      policy({
        limit: 10.7,
        remaining: -3,
        resetAfterMs: Number.NaN,
        windowMs: Number.POSITIVE_INFINITY,
      }),
    ]);
    expect(formatRateLimitHeaders(d)).toEqual({
      RateLimit: '"default";r=0;t=0',
      'RateLimit-Policy': '"default";q=10',
    });
    const huge = decisionOf([policy({ resetAfterMs: 1e300 })]);
    expect(formatRateLimitHeaders(huge).RateLimit).toBe('"default";r=99;t=999999999999999');
  });
});
