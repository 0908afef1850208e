// quota: its options, its key id, its kernel at the seams of the calendar, the period pick the
// Lua fragment mirrors, the per-call ARGV, and the RateLimit headers of a quota decision.
import { describe, expect, it } from 'vitest';
import { formatRateLimitHeaders } from '../src/headers/index.js';
import {
  createLimiter,
  fixedWindow,
  isFloodgateError,
  type Policy,
  quota,
  tokenBucket,
} from '../src/index.js';
import { newVerdict } from '../src/policies/common.js';
import { evaluatePolicy } from '../src/policies/compose.js';
import { quotaKernel, quotaPeriodEnd } from '../src/policies/quota.js';
import { encodeScriptArgs } from '../src/redis/protocol.js';
import type { StoreCall } from '../src/store.js';
import { MapStore } from './map-store.js';

const H = 3_600_000;
const iso = (s: string) => Date.parse(s);

function code(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return isFloodgateError(e) ? e.code : 'not a FloodgateError';
  }
  return undefined;
}

describe('quota(): options', () => {
  it('refuses bad options with INVALID_POLICY, at construction', () => {
    const bad: unknown[] = [
      { limit: 10, per: 'day', timeZone: 'Mars/Olympus_Mons' },
      { limit: 10, per: 'day', timeZone: '' },
      { limit: 10, per: 'day', timeZone: 7 },
      { limit: 10, per: 'year' },
      { limit: 10 },
      { limit: 0, per: 'day' },
      { limit: 1.5, per: 'month' },
      { limit: 10, per: 'week', window: '1d' },
      { limit: 10, per: 'day', name: 'é' },
      null,
    ];
    for (const o of bad)
      expect(
        code(() => quota(o as never)),
        JSON.stringify(o),
      ).toBe('INVALID_POLICY');
  });

  it('defaults to UTC, names itself after its limit and unit, and advertises a nominal window', () => {
    const p = quota({ limit: 100, per: 'month' });
    expect(p.calendar).toEqual({ per: 'month', timeZone: 'UTC' });
    expect([p.kind, p.name, p.limit, p.capacity, p.params]).toEqual([
      'quota',
      '100-per-month',
      100,
      100,
      [100, 0, 0],
    ]);
    expect(quota({ limit: 5, per: 'day' }).windowMs).toBe(86_400_000);
    expect(quota({ limit: 5, per: 'week' }).windowMs).toBe(604_800_000);
    expect(Object.isFrozen(p) && Object.isFrozen(p.calendar)).toBe(true);
  });

  it('has a key id that changes with the unit, the zone and a given name, not with the limit', () => {
    const base = quota({ limit: 100, per: 'day', timeZone: 'Europe/Berlin' });
    expect(base.id).toMatch(/^qt:/);
    // The limit is read at each decision: a new limit keeps the period's count.
    expect(quota({ limit: 101, per: 'day', timeZone: 'Europe/Berlin' }).id).toBe(base.id);
    const others = [
      quota({ limit: 100, per: 'day', timeZone: 'Europe/Berlin', name: 'x' }),
      quota({ limit: 100, per: 'week', timeZone: 'Europe/Berlin' }),
      quota({ limit: 100, per: 'day', timeZone: 'Europe/Paris' }),
      quota({ limit: 100, per: 'day' }),
    ];
    expect(new Set([base.id, ...others.map((p) => p.id)]).size).toBe(5);
  });
});

describe('quota: the kernel at the seams', () => {
  it('resets at the real next local midnight: a 23-hour day in Berlin', () => {
    const p = quota({ limit: 2, per: 'day', timeZone: 'Europe/Berlin' });
    const midnight = iso('2024-03-30T23:00:00Z');
    const first = evaluatePolicy(p, undefined, midnight, 2);
    expect([first.allowed, first.nextRemaining, first.nextResetAfterMs]).toEqual([true, 0, 23 * H]);
    const denied = evaluatePolicy(p, first.next, midnight + 23 * H - 1, 1);
    expect([denied.allowed, denied.retryAfterMs, denied.resetAfterMs]).toEqual([false, 1, 1]);
    const next = evaluatePolicy(p, first.next, midnight + 23 * H, 1);
    expect([next.allowed, next.remaining, next.nextResetAfterMs]).toEqual([true, 2, 24 * H]);
  });

  it('a 25-hour day in New York, a 24.5-hour day on Lord Howe, a month of 29 days', () => {
    const wait = (p: Policy, at: string) =>
      evaluatePolicy(p, undefined, iso(at), 1).nextResetAfterMs;
    expect(
      wait(quota({ limit: 1, per: 'day', timeZone: 'America/New_York' }), '2024-11-03T04:00:00Z'),
    ).toBe(25 * H);
    expect(
      wait(
        quota({ limit: 1, per: 'day', timeZone: 'Australia/Lord_Howe' }),
        '2024-04-06T13:00:00Z',
      ),
    ).toBe(24.5 * H);
    expect(wait(quota({ limit: 1, per: 'month' }), '2024-02-01T00:00:00Z')).toBe(29 * 24 * H);
    expect(
      wait(quota({ limit: 1, per: 'week', timeZone: 'Asia/Kathmandu' }), '2024-06-09T18:15:00Z'),
    ).toBe(7 * 24 * H);
  });

  it('a caller behind a key written in a later period is counted there, its waits from its own clock', () => {
    const v = newVerdict();
    const end = 1_000_000;
    // The key holds 3 of 3 in the period ending at 2 000 000; this caller's period ends at 1 000 000.
    quotaKernel(3, end, 0, true, 2_000_000, 3, 0, undefined, 900_000, 1, v);
    expect([v.allowed, v.remaining, v.retryAfterMs, v.resetAfterMs]).toEqual([
      false,
      0,
      1_100_000,
      1_100_000,
    ]);
    quotaKernel(5, end, 0, true, 2_000_000, 3, 0, undefined, 900_000, 1, v);
    expect([v.allowed, v.n0, v.n1, v.nextResetAfterMs]).toEqual([true, 2_000_000, 4, 1_100_000]);
    // An older period's count is not this one's.
    quotaKernel(3, end, 0, true, 500_000, 3, 0, undefined, 900_000, 1, v);
    expect([v.allowed, v.n0, v.n1, v.resetAfterMs]).toEqual([true, end, 1, 0]);
  });

  it('quotaPeriodEnd picks the period by the deciding clock, clamps one behind, refuses one past', () => {
    expect(quotaPeriodEnd(100, 200, 300, 150)).toBe(200);
    expect(quotaPeriodEnd(100, 200, 300, 100)).toBe(200);
    expect(quotaPeriodEnd(100, 200, 300, 200)).toBe(300);
    expect(quotaPeriodEnd(100, 200, 300, 299)).toBe(300);
    expect(quotaPeriodEnd(100, 200, 300, 99)).toBe(100);
    expect(quotaPeriodEnd(100, 200, 300, 300)).toBeNaN();
  });
});

describe('quota: ARGV and composition', () => {
  const keys = ['k:{a}:1', 'k:{a}:2'];

  it('sends the limit, then the three period ends around the host clock; static kinds stay cached', () => {
    const q = quota({ limit: 7, per: 'day', timeZone: 'Europe/Berlin' });
    const fw = fixedWindow({ limit: 5, window: '1m' });
    const call: StoreCall = { keys, policies: [fw, q], cost: 1, mode: 'limit' };
    const t = iso('2024-03-31T12:00:00Z');
    const ends = [
      iso('2024-03-30T23:00:00Z'),
      iso('2024-03-31T22:00:00Z'),
      iso('2024-04-01T22:00:00Z'),
    ];
    // Client clock: at `now`.
    expect(encodeScriptArgs(call, t)).toEqual([
      'limit',
      '1',
      String(t),
      '',
      '5',
      '60000',
      '7',
      ...ends.map(String),
    ]);
    // Server clock: at the host's clock; a day later, the next ends.
    expect(encodeScriptArgs(call, undefined, undefined, () => t).slice(6)).toEqual([
      '7',
      ...ends.map(String),
    ]);
    expect(encodeScriptArgs(call, undefined, undefined, () => t + 24 * H).slice(7)).toEqual([
      String(ends[1]),
      String(ends[2]),
      String(iso('2024-04-02T22:00:00Z')),
    ]);
    const only: StoreCall = { keys: [keys[0]!], policies: [fw], cost: 2, mode: 'peek' };
    expect(encodeScriptArgs(only, undefined, 99)).toEqual(['peek', '2', '', '99', '5', '60000']);
  });

  it('composes all-or-nothing with a token bucket, and the headers report the real midnight', async () => {
    let now = iso('2024-10-27T20:00:00Z'); // 21:00 in Berlin on a 25-hour day: 3 hours to midnight
    const daily = quota({ limit: 3, per: 'day', timeZone: 'Europe/Berlin', name: 'daily' });
    const limiter = createLimiter({
      store: new MapStore(() => now),
      policy: [tokenBucket({ limit: 2, interval: '1s', name: 'burst' }), daily],
    });
    expect((await limiter.limit('k', { cost: 2 })).allowed).toBe(true);
    const bucketSays = await limiter.limit('k');
    expect([bucketSays.allowed, bucketSays.policies[1]!.allowed]).toEqual([false, true]);
    now += 1000;
    const ok = await limiter.limit('k');
    expect([ok.allowed, ok.policies[1]!.remaining, ok.policies[1]!.resetAfterMs]).toEqual([
      true,
      0,
      3 * H - 1000,
    ]);
    now += 1000;
    const quotaSays = await limiter.limit('k');
    expect([quotaSays.allowed, quotaSays.policies[0]!.allowed]).toEqual([false, true]);
    expect(quotaSays.retryAfterMs).toBe(3 * H - 2000);
    // The denial charged the bucket nothing: it still has both tokens.
    expect((await limiter.peek('k')).policies[0]!.remaining).toBe(2);
    const headers = formatRateLimitHeaders(quotaSays, { standard: 'draft-7' });
    expect(headers.RateLimit).toBe(`limit=3, remaining=0, reset=${(3 * H - 2000) / 1000}`);
    expect(headers['Retry-After']).toBe(String((3 * H - 2000) / 1000));
    const draft8 = formatRateLimitHeaders(quotaSays);
    expect(draft8.RateLimit).toContain(`"daily";r=0;t=${(3 * H - 2000) / 1000}`);
    now = iso('2024-10-27T23:00:00Z'); // midnight in Berlin
    expect((await limiter.limit('k', { cost: 2 })).policies[1]!.remaining).toBe(1);
  });
});
