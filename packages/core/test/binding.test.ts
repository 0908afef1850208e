import { describe, expect, it } from 'vitest';
import { toDecision } from '../src/decision.js';
import { formatRateLimitHeaders } from '../src/headers/index.js';
import {
  createLimiter,
  fixedWindow,
  leakyBucket,
  mergeDecisions,
  slidingWindow,
  tokenBucket,
} from '../src/index.js';
import type { PolicyResult } from '../src/store.js';
import type { Decision } from '../src/types.js';
import { decisionOf, policy } from './headers-fixtures.js';
import { MapStore } from './map-store.js';

const fw = fixedWindow({ limit: 100, window: '1m', name: 'minute' });
const tb = tokenBucket({ limit: 10, interval: '1s', name: 'burst' });
const lb = leakyBucket({ limit: 5, interval: '1s', queue: 3, name: 'shape' });
const day = fixedWindow({ limit: 10, window: '1d', name: 'day' });

const r = (over: Partial<PolicyResult>): PolicyResult => ({
  allowed: true,
  remaining: 5,
  resetAfterMs: 100,
  retryAfterMs: 0,
  delayMs: 0,
  ...over,
});

/** The binding's position, checked to be one of the decision's own parts. */
function bindingIndex(d: Decision): number {
  const i = d.policies.indexOf(d.binding);
  expect(i, 'binding is one of policies, the same object').toBeGreaterThanOrEqual(0);
  expect([d.limit, d.remaining]).toEqual([d.binding.limit, d.binding.remaining]);
  return i;
}

describe('Decision.binding from toDecision', () => {
  it('one policy: that policy, allowed or denied', () => {
    expect(bindingIndex(toDecision([fw], [r({})]))).toBe(0);
    const denied = toDecision([fw], [r({ allowed: false, remaining: 0, retryAfterMs: 900 })]);
    expect(bindingIndex(denied)).toBe(0);
    expect(denied.binding.name).toBe('minute');
  });

  it('all admit: the policy with the fewest remaining', () => {
    const d = toDecision([fw, tb, lb], [r({ remaining: 50 }), r({ remaining: 9 }), r({})]);
    expect(bindingIndex(d)).toBe(2);
    expect(d.binding.name).toBe('shape');
  });

  it('denied: a denying policy binds, even when one that admitted has fewer units left', () => {
    // Per-policy costs: 5 against 3 units left denies `minute`; `burst`, charged 0 with 2 left,
    // admitted. The 429 is `minute`'s, and so are its limit, remaining and reset.
    const d = toDecision(
      [fw, tb],
      [r({ allowed: false, remaining: 3, retryAfterMs: 700 }), r({ remaining: 2 })],
    );
    expect([d.allowed, d.binding.name, d.remaining, d.limit]).toEqual([false, 'minute', 3, 100]);
  });

  it('a tie of different limits keeps the first; a tie of the same limit goes to the later return', () => {
    const first = toDecision([fw, tb], [r({ remaining: 0 }), r({ remaining: 0, resetAfterMs: 9 })]);
    expect(first.binding.name).toBe('minute');
    const later = toDecision(
      [tb, day],
      [r({ remaining: 4, resetAfterMs: 600 }), r({ remaining: 4, resetAfterMs: 80_000 })],
    );
    expect(later.binding.name).toBe('day');
    // A denied policy comes back at its retry time when that is later than its reset.
    const retry = toDecision(
      [day, tb],
      [
        r({ remaining: 0, resetAfterMs: 500 }),
        r({ allowed: false, remaining: 0, resetAfterMs: 400, retryAfterMs: 2_000 }),
      ],
    );
    expect(retry.binding.name).toBe('burst');
    expect(toDecision([day, tb], [r({ remaining: 1 }), r({ remaining: 1 })]).binding.name).toBe(
      'day',
    );
  });

  it('shaping: a delayed leaky bucket binds once it has the fewest units left', async () => {
    let now = 0;
    const limiter = createLimiter({
      store: new MapStore(() => now),
      policy: [fixedWindow({ limit: 20, window: '1m', name: 'minute' }), lb],
    });
    const first = await limiter.limit('k');
    expect([first.binding.name, first.delayMs]).toEqual(['shape', 0]);
    const second = await limiter.limit('k');
    expect(second.delayMs).toBe(200);
    expect([second.binding.name, second.binding.delayMs]).toEqual(['shape', 200]);
    bindingIndex(second);
    now = 10_000;
    const drained = await limiter.peek('k');
    expect(drained.binding.name).toBe('shape');
  });

  it('a real limiter: the burst quota binds, then the daily one once it runs lower', async () => {
    const limiter = createLimiter({
      store: new MapStore(() => 0),
      policy: [tokenBucket({ limit: 10, interval: '1s', name: 'burst' }), day],
    });
    expect((await limiter.limit('k')).binding.name).toBe('day'); // 9 and 9: same limit, day lasts
    const d = await limiter.limit('k', { cost: 8 });
    expect([d.binding.name, d.remaining]).toEqual(['day', 1]);
    const denied = await limiter.limit('k', { cost: 2 });
    expect([denied.allowed, denied.binding.name, denied.binding.allowed]).toEqual([
      false,
      'day',
      false,
    ]);
  });
});

describe('headers follow decision.binding', () => {
  it('draft-6/7 and legacy report the named binding policy, not a guess', () => {
    const a = policy({ name: 'a', limit: 10, remaining: 3, resetAfterMs: 1_000 });
    const b = policy({ name: 'b', limit: 10, remaining: 3, resetAfterMs: 30_000 });
    const d = decisionOf([a, b]);
    expect(d.binding).toBe(b);
    expect(formatRateLimitHeaders(d, { standard: 'draft-7' }).RateLimit).toBe(
      'limit=10, remaining=3, reset=30',
    );
    // A decision naming `a` (as a caller may build one) is reported as `a`.
    const named = { ...d, binding: a };
    expect(formatRateLimitHeaders(named, { standard: 'draft-6' })['RateLimit-Reset']).toBe('1');
    expect(formatRateLimitHeaders(named, { legacy: true })['X-RateLimit-Reset']).toBe('1');
  });

  it('standard: false sends only legacy headers and Retry-After', () => {
    const denied = decisionOf([
      policy({ allowed: false, remaining: 0, resetAfterMs: 500, retryAfterMs: 1_500 }),
    ]);
    expect(formatRateLimitHeaders(denied, { standard: false })).toEqual({ 'Retry-After': '2' });
    expect(formatRateLimitHeaders(denied, { standard: false, legacy: true })).toEqual({
      'X-RateLimit-Limit': '100',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset': '2',
      'Retry-After': '2',
    });
    expect(formatRateLimitHeaders(decisionOf([policy()]), { standard: false })).toEqual({});
  });

  it('a [min, max] jitter range spreads Retry-After over exactly that range', () => {
    const denied = decisionOf([
      policy({ allowed: false, remaining: 0, resetAfterMs: 500, retryAfterMs: 1_500 }),
    ]);
    const at = (u: number) =>
      formatRateLimitHeaders(denied, { retryAfterJitterMs: [1_000, 3_000], random: () => u })[
        'Retry-After'
      ];
    expect([at(0), at(0.5), at(0.999)]).toEqual(['3', '4', '5']);
  });
});

describe('mergeDecisions', () => {
  const one = (
    policies: Parameters<typeof toDecision>[0],
    results: PolicyResult[],
    reason?: Decision['reason'],
  ) => toDecision(policies, results, reason);

  it('one decision is returned as it is; none is refused', () => {
    const d = one([fw], [r({})]);
    expect(mergeDecisions([d])).toBe(d);
    expect(() => mergeDecisions([])).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });

  it("stacked limiters: the binding is the binding decision's binding", () => {
    const perKey = one([fw, tb], [r({ remaining: 40 }), r({ remaining: 6 })]);
    const perIp = one(
      [slidingWindow({ limit: 50, window: '1m', name: 'ip' })],
      [r({ allowed: false, remaining: 2, retryAfterMs: 3_000 })],
    );
    const d = mergeDecisions([perKey, perIp]);
    expect(d.binding).toBe(perIp.binding);
    expect(d).toMatchObject({ allowed: false, limit: 50, remaining: 2, retryAfterMs: 3_000 });
    expect(d.policies.map((p) => p.name)).toEqual(['minute', 'burst', 'ip']);
  });

  it('ties across decisions are decided as within one limiter', () => {
    // Both decisions have a policy with 0 left. `late` binds `minute` (the first of its tie);
    // merged after `early`, whose `day` sets the limit 10, its `hour` (same limit, back later) binds.
    const hour = fixedWindow({ limit: 10, window: '1h', name: 'hour' });
    const early = one([day], [r({ remaining: 0, resetAfterMs: 1_000 })]);
    const late = one(
      [fw, hour],
      [r({ remaining: 0, resetAfterMs: 5_000 }), r({ remaining: 0, resetAfterMs: 60_000 })],
    );
    expect(late.binding.name).toBe('minute');
    const d = mergeDecisions([early, late]);
    expect(d.binding).toBe(late.policies[1]);
    const together = one(
      [day, fw, hour],
      [
        r({ remaining: 0, resetAfterMs: 1_000 }),
        r({ remaining: 0, resetAfterMs: 5_000 }),
        r({ remaining: 0, resetAfterMs: 60_000 }),
      ],
    );
    expect([together.binding.name, together.limit]).toEqual(['hour', 10]);
    expect(formatRateLimitHeaders(d, { standard: 'draft-7' }).RateLimit).toBe(
      'limit=10, remaining=0, reset=60',
    );
  });

  it('keeps the first reason, and the largest delay only when allowed', () => {
    const shaped = one([lb], [r({ delayMs: 400 })]);
    const degraded = one([fw], [r({ remaining: 90 })], 'store-timeout');
    const allowed = mergeDecisions([shaped, degraded]);
    expect([allowed.delayMs, allowed.reason, allowed.binding.name]).toEqual([
      400,
      'store-timeout',
      'shape',
    ]);
    const denied = mergeDecisions([allowed, one([tb], [r({ allowed: false, remaining: 0 })])]);
    expect([denied.allowed, denied.delayMs, denied.binding.name]).toEqual([false, 0, 'burst']);
  });
});
