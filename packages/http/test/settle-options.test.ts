// Per-policy costs and settling, checked when the middleware is made (FloodgateError
// 'INVALID_OPTION', before any request), and the usage meter's own checks ('INVALID_COST').
import { createLimiter, fixedWindow } from '@floodgate/core';
import { describe, expect, it } from 'vitest';
import type { RateLimitOptions } from '../src/index.js';
import { rateLimit } from '../src/node/index.js';
import { Meter } from '../src/shared/usage.js';
import { tokenLimiter } from './support/settle.js';
import { steadyMemoryStore } from './support/stores.js';

const limiter = tokenLimiter();
const code = (c: string) => expect.objectContaining({ name: 'FloodgateError', code: c });

describe('settle options', () => {
  it.each<[string, RateLimitOptions]>([
    ['settle that is not a boolean or function', { limiter, settle: 'yes' as never }],
    ['settleWithinMs without settle', { limiter, settleWithinMs: 1000 }],
    ['settleWithinMs of 0', { limiter, settle: true, settleWithinMs: 0 }],
    ['settleWithinMs not whole', { limiter, settle: true, settleWithinMs: 1.5 }],
    ['a cost record naming no policy', { limiter, cost: { tokens: 1, words: 2 } }],
    ['a cost record with a negative value', { limiter, cost: { tokens: -1 } }],
    ['a cost record charging nothing', { limiter, cost: { requests: 0, tokens: 0 } }],
    ['a cost record that is an array', { limiter, cost: [1] as never }],
    [
      'a cost record with skipFailedRequests but no settle',
      { limiter, cost: { tokens: 5 }, skipFailedRequests: true },
    ],
    [
      "a rule's record naming another rule's policy",
      {
        rules: [
          { limiter, cost: { requests: 1 } },
          {
            limiter: createLimiter({
              store: steadyMemoryStore(),
              policy: fixedWindow({ name: 'ip', limit: 5, window: '1m' }),
            }),
            cost: { requests: 1 },
          },
        ],
      },
    ],
    [
      'settle with a limiter without reserve()',
      { limiter: { ...limiter, reserve: undefined } as never, settle: true },
    ],
  ])('%s is INVALID_OPTION', (_what, options) => {
    expect(() => rateLimit(options)).toThrow(code('INVALID_OPTION'));
  });

  it('takes what is right', () => {
    expect(() => rateLimit({ limiter, cost: { tokens: 5 } })).not.toThrow();
    expect(() => rateLimit({ limiter, cost: { requests: 1, tokens: 0 } })).not.toThrow();
    expect(() => rateLimit({ limiter, settle: false })).not.toThrow();
    expect(() =>
      rateLimit({ limiter, cost: () => ({ tokens: 5 }), settle: () => 3, settleWithinMs: 5000 }),
    ).not.toThrow();
    expect(() =>
      rateLimit({ limiter, cost: { tokens: 5 }, settle: true, skipFailedRequests: true }),
    ).not.toThrow();
  });
});

describe('the usage meter', () => {
  it('adds numbers to numbers and records to records, per name', () => {
    const m = new Meter();
    expect(m.reported).toBeUndefined();
    m.add(2);
    m.add(3);
    expect(m.reported).toBe(5);
    m.report({ tokens: 1 });
    m.add({ tokens: 2, words: 4 });
    expect(m.reported).toEqual({ tokens: 3, words: 4 });
    // A copy: changing it changes nothing.
    (m.reported as Record<string, number>).tokens = 99;
    expect(m.reported).toEqual({ tokens: 3, words: 4 });
  });

  it('refuses what is not a cost, and a number added to a record', () => {
    const m = new Meter();
    m.add({ tokens: 1 });
    expect(() => m.add(1)).toThrow(code('INVALID_COST'));
    expect(() => m.add({ tokens: -1 })).toThrow(code('INVALID_COST'));
    expect(() => m.report(1.5)).toThrow(code('INVALID_COST'));
    expect(() => m.report(Number.NaN)).toThrow(code('INVALID_COST'));
    expect(m.reported).toEqual({ tokens: 1 });
  });

  it('settles once every registration is done; later reports change nothing', async () => {
    const m = new Meter();
    await m.settled; // nothing registered: at once
    const first = m.register();
    const second = m.register();
    let settled = false;
    void m.settled.then(() => {
      settled = true;
    });
    first();
    first();
    await Promise.resolve();
    expect(settled).toBe(false);
    second();
    await m.settled;
    await Promise.resolve();
    expect(settled).toBe(true);
    m.add(4);
    expect(m.reported).toBeUndefined();
  });
});
