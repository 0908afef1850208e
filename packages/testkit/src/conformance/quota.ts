import { type Policy, quota, tokenBucket } from '@floodgate/core';
import { DAY, expectTtls, fields, type Harness } from './harness.js';

const H = 3_600_000;
const at = (iso: string) => Date.parse(iso);

/**
 * Periods whose bounds were read off each zone's published rules (not computed by the code under
 * test): `[name, policy, period start, period end]`.
 */
const SEAMS: readonly (readonly [string, Policy, number, number])[] = [
  [
    'a 23-hour day in Berlin (clocks spring forward)',
    quota({ limit: 3, per: 'day', timeZone: 'Europe/Berlin' }),
    at('2024-03-30T23:00:00Z'),
    at('2024-03-31T22:00:00Z'),
  ],
  [
    'a 25-hour day in New York (clocks fall back)',
    quota({ limit: 3, per: 'day', timeZone: 'America/New_York' }),
    at('2024-11-03T04:00:00Z'),
    at('2024-11-04T05:00:00Z'),
  ],
  [
    'a 24.5-hour day on Lord Howe Island (a 30-minute shift)',
    quota({ limit: 3, per: 'day', timeZone: 'Australia/Lord_Howe' }),
    at('2024-04-06T13:00:00Z'),
    at('2024-04-07T13:30:00Z'),
  ],
  [
    'a day in Kathmandu (UTC+5:45)',
    quota({ limit: 3, per: 'day', timeZone: 'Asia/Kathmandu' }),
    at('2024-06-14T18:15:00Z'),
    at('2024-06-15T18:15:00Z'),
  ],
  [
    'a week from Monday in Berlin across the spring change',
    quota({ limit: 3, per: 'week', timeZone: 'Europe/Berlin' }),
    at('2024-03-24T23:00:00Z'),
    at('2024-03-31T22:00:00Z'),
  ],
  [
    'February 2024 in UTC (29 days)',
    quota({ limit: 3, per: 'month' }),
    at('2024-02-01T00:00:00Z'),
    at('2024-03-01T00:00:00Z'),
  ],
  [
    'April 2023 in New York (30 days)',
    quota({ limit: 3, per: 'month', timeZone: 'America/New_York' }),
    at('2023-04-01T04:00:00Z'),
    at('2023-05-01T04:00:00Z'),
  ],
];

/** Slack for a store host whose clock differs a little from this one's. */
const SKEW_MS = 5000;

/** Calendar quotas: counts per local period, exact at the seams, composed all-or-nothing. */
export function registerQuota(h: Harness): void {
  h.api.describe(
    'quota: a count per calendar period, reset at the real next local midnight',
    () => {
      if (!h.controlsTime) {
        h.test(
          'on the store clock: the period ends at the next real midnight of its zone',
          async (run) => {
            // Kathmandu has kept UTC+5:45 since 1986: its next midnight is plain arithmetic.
            const offset = 5 * H + 45 * 60_000;
            for (const [policy, shift] of [
              [quota({ limit: 3, per: 'day' }), 0],
              [quota({ limit: 3, per: 'day', timeZone: 'Asia/Kathmandu' }), offset],
            ] as const) {
              const before = Date.now();
              const d = await run.limiter(policy).limit('t');
              const after = Date.now();
              h.expect(d.allowed, `${policy.id}: first call`).toBe(true);
              const left = (ms: number) => DAY - ((ms + shift) % DAY);
              h.expect(d.resetAfterMs, `${policy.id}: until the next midnight`).toBeLessThanOrEqual(
                left(before) + SKEW_MS,
              );
              h.expect(
                d.resetAfterMs,
                `${policy.id}: until the next midnight`,
              ).toBeGreaterThanOrEqual(left(after) - SKEW_MS);
              await expectTtls(h, run, run.limiter(policy), 't', d);
            }
          },
        );
        return;
      }

      for (const [name, policy, start, end] of SEAMS) {
        h.test(`${name}: counted from its first ms to its last`, async (run) => {
          const l = run.limiter(policy);
          run.now = start - 1;
          const before = await l.limit('k', { cost: 3 });
          h.expect(
            [before.allowed, before.resetAfterMs],
            'the last ms of the period before',
          ).toEqual([true, 1]);
          run.now = start;
          const first = await l.limit('k', { cost: 2 });
          h.expect(fields(first), 'its first ms: a fresh count, reset at its end').toEqual({
            allowed: true,
            limit: 3,
            remaining: 1,
            resetAfterMs: end - start,
            retryAfterMs: 0,
            delayMs: 0,
          });
          await expectTtls(h, run, l, 'k', first);
          run.now = end - 1;
          const last = await l.limit('k', { cost: 2 });
          h.expect(
            [last.allowed, last.remaining, last.retryAfterMs, last.resetAfterMs],
            'its last ms: 1 unit left, a cost of 2 waits 1 ms',
          ).toEqual([false, 1, 1, 1]);
          run.now = end;
          const next = await l.peek('k');
          h.expect([next.allowed, next.remaining, next.resetAfterMs], 'the next period').toEqual([
            true,
            3,
            0,
          ]);
        });
      }

      h.test('composed with a token bucket: all or nothing, and the longer wait', async (run) => {
        run.now = at('2024-10-27T20:00:00Z'); // 21:00 in Berlin on a 25-hour day: 3 hours left
        const daily = quota({ limit: 3, per: 'day', timeZone: 'Europe/Berlin' });
        const l = run.limiter([tokenBucket({ limit: 2, interval: '1s' }), daily]);
        h.expect((await l.limit('k', { cost: 2 })).allowed, 'two units').toBe(true);
        const byBucket = await l.limit('k');
        h.expect(
          [byBucket.allowed, byBucket.policies[1]!.allowed, byBucket.retryAfterMs],
          'the bucket denies, the quota would admit',
        ).toEqual([false, true, 500]);
        run.advance(1000);
        const third = await l.limit('k');
        h.expect(
          [third.allowed, third.policies[1]!.remaining, third.policies[1]!.resetAfterMs],
          'the quota was not charged by the denial',
        ).toEqual([true, 0, 3 * H - 1000]);
        await expectTtls(h, run, l, 'k', third);
        run.advance(1000);
        const byQuota = await l.limit('k');
        h.expect(
          [byQuota.allowed, byQuota.policies[0]!.allowed, byQuota.retryAfterMs],
          'the quota denies until midnight',
        ).toEqual([false, true, 3 * H - 2000]);
        h.expect((await l.peek('k')).policies[0]!.remaining, 'the bucket was not charged').toBe(2);
        run.now = at('2024-10-27T23:00:00Z');
        h.expect((await l.limit('k', { cost: 2 })).allowed, 'midnight: a new day').toBe(true);
      });

      h.test('a caller whose clock is behind a later period is counted in it', async (run) => {
        const daily = quota({ limit: 2, per: 'day' });
        const l = run.limiter(daily);
        const midnight = at('2024-01-02T00:00:00Z');
        run.now = midnight + 1000;
        h.expect((await l.limit('k', { cost: 2 })).allowed, 'the new day, spent').toBe(true);
        run.now = midnight - 1000; // a caller two seconds behind, still on the day before
        const behind = await l.limit('k');
        h.expect(
          [behind.allowed, behind.remaining, behind.retryAfterMs],
          'denied in the key’s day, waiting from its own clock',
        ).toEqual([false, 0, DAY + 1000]);
      });
    },
  );
}
