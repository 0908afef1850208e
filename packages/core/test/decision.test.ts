import { describe, expect, it } from 'vitest';
import { toDecision } from '../src/decision.js';
import { fixedWindow, leakyBucket, tokenBucket } from '../src/index.js';
import type { PolicyResult } from '../src/store.js';

const fw = fixedWindow({ limit: 100, window: '1m', name: 'minute' });
const tb = tokenBucket({ limit: 10, interval: '1s', name: 'burst' });
const lb = leakyBucket({ limit: 5, interval: '1s', queue: 3, name: 'shape' });

const r = (over: Partial<PolicyResult>): PolicyResult => ({
  allowed: true,
  remaining: 5,
  resetAfterMs: 100,
  retryAfterMs: 0,
  delayMs: 0,
  ...over,
});

describe('toDecision', () => {
  it('one policy: its result, with its name, kind, limit and window', () => {
    const d = toDecision([fw], [r({ remaining: 42, resetAfterMs: 9000 })]);
    expect(d).toEqual({
      allowed: true,
      limit: 100,
      remaining: 42,
      resetAfterMs: 9000,
      retryAfterMs: 0,
      delayMs: 0,
      policies: [
        {
          name: 'minute',
          kind: 'fixedWindow',
          limit: 100,
          windowMs: 60_000,
          allowed: true,
          remaining: 42,
          resetAfterMs: 9000,
          retryAfterMs: 0,
          delayMs: 0,
        },
      ],
      binding: expect.objectContaining({ name: 'minute', remaining: 42 }),
    });
    expect('reason' in d).toBe(false);
  });

  it('several: the binding policy (fewest remaining) gives limit and remaining; the first on a tie', () => {
    const d = toDecision(
      [fw, tb, lb],
      [r({ remaining: 50 }), r({ remaining: 3 }), r({ remaining: 3 })],
    );
    expect([d.limit, d.remaining]).toEqual([10, 3]);
    const e = toDecision([fw, tb], [r({ remaining: 0 }), r({ remaining: 0 })]);
    expect(e.limit).toBe(100);
  });

  it('resetAfterMs is the largest; delayMs the largest when allowed', () => {
    const d = toDecision(
      [fw, tb, lb],
      [r({ resetAfterMs: 500 }), r({ resetAfterMs: 60_000 }), r({ resetAfterMs: 7, delayMs: 400 })],
    );
    expect([d.allowed, d.resetAfterMs, d.delayMs, d.retryAfterMs]).toEqual([true, 60_000, 400, 0]);
  });

  it('denied when any denies: retryAfterMs is the largest wait, delayMs is 0', () => {
    const d = toDecision(
      [fw, tb, lb],
      [
        r({ allowed: false, remaining: 0, retryAfterMs: 2000 }),
        r({ allowed: false, remaining: 0, retryAfterMs: 30_000 }),
        r({ allowed: true, delayMs: 600 }),
      ],
    );
    expect([d.allowed, d.retryAfterMs, d.delayMs, d.remaining, d.limit]).toEqual([
      false,
      30_000,
      0,
      0,
      100,
    ]);
    expect(d.policies.map((p) => [p.name, p.allowed, p.retryAfterMs, p.delayMs])).toEqual([
      ['minute', false, 2000, 0],
      ['burst', false, 30_000, 0],
      ['shape', true, 0, 600],
    ]);
  });

  it('passes a reason through only when given', () => {
    expect(toDecision([fw], [r({})], 'store-timeout').reason).toBe('store-timeout');
    expect(Object.keys(toDecision([fw], [r({})]))).not.toContain('reason');
  });
});
