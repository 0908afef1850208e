import { type Decision, fixedWindow, mergeDecisions } from '@floodgate/core';
import { describe, expect, test } from 'vitest';
import { mergeExposeHeaders, parseJitter, retryAfterSeconds } from '../src/adapter/index.js';

describe('retryAfterSeconds', () => {
  test('1 000 denials over a 0–5 s range: never early, at least five distinct seconds', () => {
    for (const retryAfterMs of [1, 999, 1000, 1001, 1500, 32_000]) {
      const seen = new Set<number>();
      for (let i = 0; i < 1000; i++) {
        const s = retryAfterSeconds(retryAfterMs, [0, 5000]);
        expect(s * 1000).toBeGreaterThanOrEqual(retryAfterMs);
        expect(s).toBeLessThanOrEqual(Math.ceil((retryAfterMs + 5000) / 1000));
        seen.add(s);
      }
      expect(seen.size).toBeGreaterThanOrEqual(5);
    }
  });

  test('rounds up without jitter', () => {
    expect([0, 1, 1000, 1001, 9750].map((ms) => retryAfterSeconds(ms))).toEqual([0, 1, 1, 2, 10]);
  });

  test('a misbehaving random source can only lengthen the wait', () => {
    for (const u of [-1, Number.NaN, 0, 2, Number.POSITIVE_INFINITY]) {
      const s = retryAfterSeconds(1500, [1000, 3000], () => u);
      expect(s).toBeGreaterThanOrEqual(3);
      expect(s).toBeLessThanOrEqual(5);
    }
  });
});

describe('parseJitter', () => {
  test.each([
    [undefined, [0, 0]],
    [500, [0, 500]],
    ['5s', [0, 5000]],
    [
      ['250ms', '1.5s'],
      [250, 1500],
    ],
    [
      [0, '1m'],
      [0, 60_000],
    ],
  ] as const)('%j → %j', (value, expected) => {
    expect(parseJitter(value as never)).toEqual(expected);
  });
  test.each([[-1], ['5 parsecs'], [['2s', '1s']], [[1]], [Number.NaN]])(
    '%j is refused',
    (value) => {
      expect(() => parseJitter(value as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION' }),
      );
    },
  );
});

describe('mergeExposeHeaders', () => {
  test('adds each name once, keeps what was there', () => {
    expect(mergeExposeHeaders('X-Request-Id, ratelimit', ['RateLimit', 'Retry-After'])).toBe(
      'X-Request-Id, ratelimit, Retry-After',
    );
    expect(mergeExposeHeaders(undefined, ['RateLimit'])).toBe('RateLimit');
    expect(mergeExposeHeaders('*', ['RateLimit'])).toBe('*, RateLimit');
  });
});

describe('mergeDecisions', () => {
  const part = (
    name: string,
    allowed: boolean,
    remaining: number,
    retryAfterMs: number,
  ): Decision => {
    const p = fixedWindow({ name, limit: 10, window: '1m' });
    const only = {
      name,
      kind: p.kind,
      allowed,
      limit: 10,
      windowMs: 60_000,
      remaining,
      resetAfterMs: 60_000,
      retryAfterMs,
      delayMs: 0,
    };
    return {
      allowed,
      limit: 10,
      remaining,
      resetAfterMs: 60_000,
      retryAfterMs,
      delayMs: 0,
      policies: [only],
      binding: only,
    };
  };
  test('denied if any denied; the binding policy has the fewest left; the longest wait', () => {
    const d = mergeDecisions([
      part('a', true, 5, 0),
      part('b', false, 0, 4000),
      part('c', false, 0, 9000),
    ]);
    expect(d).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 9000 });
    expect(d.policies.map((p) => p.name)).toEqual(['a', 'b', 'c']);
  });
  test('allowed: no retry wait, the largest delay', () => {
    const d = mergeDecisions([{ ...part('a', true, 5, 0), delayMs: 300 }, part('b', true, 2, 0)]);
    expect(d).toMatchObject({ allowed: true, remaining: 2, retryAfterMs: 0, delayMs: 300 });
  });
});
