// The invariants of DESIGN.md, for any arrival pattern and cost mix: what each policy can
// provably admit, checked on the reference algorithm (the one every store must match).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { calendarPeriod } from '../src/calendar.js';
import {
  fixedWindow,
  leakyBucket,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import type { PolicyState } from '../src/policies/common.js';
import { floorDiv } from '../src/policies/common.js';
import { evaluatePolicy } from '../src/policies/compose.js';
import type { Policy } from '../src/types.js';
import { type Arrival, arrivalsArb, type Outcome, simulate } from './simulate.js';

const RUNS = { numRuns: 150 };
const small = (max: number) => fc.integer({ min: 1, max });
const windowMs = fc.oneof(small(50), fc.constantFrom(7, 100, 1000));

function fitCosts(policies: readonly Policy[], arrivals: Arrival[]): Arrival[] {
  const cap = Math.min(...policies.map((p) => p.capacity));
  return arrivals.map((a) => ({ t: a.t, cost: 1 + ((a.cost - 1) % cap) }));
}

const admitted = (out: readonly Outcome[]) => out.filter((o) => o.allowed);

/** fixedWindow: in every epoch-aligned window, admitted units ≤ limit. */
function checkFixedWindow(p: Policy, out: readonly Outcome[]): void {
  const [limit, w] = p.params;
  const perWindow = new Map<number, number>();
  for (const o of admitted(out)) {
    const k = Math.floor(o.t / w);
    perWindow.set(k, (perWindow.get(k) ?? 0) + o.cost);
  }
  for (const [k, units] of perWindow)
    expect(units, `${p.id}: window ${k}`).toBeLessThanOrEqual(limit);
}

/** slidingWindowLog: in every interval (t − window, t], admitted units ≤ limit. */
function checkSlidingLog(p: Policy, out: readonly Outcome[]): void {
  const [limit, w] = p.params;
  const a = admitted(out);
  // The fullest intervals end at an admission; a two-pointer sum over them covers all.
  let lo = 0;
  let sum = 0;
  for (let hi = 0; hi < a.length; hi++) {
    sum += a[hi]!.cost;
    while (a[lo]!.t <= a[hi]!.t - w) sum -= a[lo++]!.cost;
    expect(sum, `${p.id}: (${a[hi]!.t - w}, ${a[hi]!.t}]`).toBeLessThanOrEqual(limit);
  }
}

/**
 * slidingWindow (the two-counter estimate). Provable, and checked here:
 * - per epoch-aligned window, admitted units ≤ limit (the estimate counts the current window
 *   in full, so cur + cost ≤ limit at every admission);
 * - in any interval (t − window, t] with t in window k, elapsed e = t − start_k:
 *   units × window ≤ limit × window + P × e, where P is what window k − 1 admitted. (At the
 *   last admission in k, at elapsed e' ≤ e: P × (w − e') / w + cur ≤ limit; the interval holds
 *   at most P from k − 1.) Hence fewer than 2 × limit, and about limit when P is spread out.
 *   "Exactly limit in every sliding interval" is NOT a property of this policy: it is an
 *   approximation (use slidingWindowLog for that).
 */
function checkSlidingWindow(p: Policy, out: readonly Outcome[]): void {
  checkFixedWindow(p, out);
  const [limit, w] = p.params;
  const a = admitted(out);
  const perWindow = new Map<number, number>();
  for (const o of a)
    perWindow.set(Math.floor(o.t / w), (perWindow.get(Math.floor(o.t / w)) ?? 0) + o.cost);
  let lo = 0;
  let sum = 0;
  for (let hi = 0; hi < a.length; hi++) {
    const t = a[hi]!.t;
    sum += a[hi]!.cost;
    while (a[lo]!.t <= t - w) sum -= a[lo++]!.cost;
    const k = Math.floor(t / w);
    const prev = perWindow.get(k - 1) ?? 0;
    const e = t - k * w;
    expect(sum * w, `${p.id}: (${t - w}, ${t}], P = ${prev}, e = ${e}`).toBeLessThanOrEqual(
      limit * w + prev * e,
    );
    expect(sum, `${p.id}: below 2 × limit`).toBeLessThan(2 * limit);
  }
}

/**
 * tokenBucket with rate r = limit / interval and capacity burst. Over any closed interval
 * [t_i, t_j] between two admissions, admitted units ≤ burst + r × (t_j − t_i), compared exactly:
 * units × interval ≤ burst × interval + limit × (t_j − t_i). Why closed, and why no "+1 ms":
 * the bucket holds ≤ burst just before t_i and refills r × (t_j − t_i) by t_j, continuously (GCRA:
 * the arrival time starts ≥ t_i, grows by interval/limit per unit and ends ≤ t_j + burst ×
 * interval/limit). At t_j − t_i = 0 this is "at most burst at one instant". Any interval of
 * length t contains admissions spanning at most t, so the bound holds for every interval.
 */
function checkTokenBucket(p: Policy, out: readonly Outcome[], capacity = p.capacity): void {
  const limit = p.limit;
  const interval = p.windowMs;
  const a = admitted(out);
  for (let i = 0; i < a.length; i++) {
    let units = 0;
    for (let j = i; j < a.length; j++) {
      units += a[j]!.cost;
      const span = a[j]!.t - a[i]!.t;
      expect(
        units * interval,
        `${p.id}: ${units} units in [${a[i]!.t}, ${a[j]!.t}]`,
      ).toBeLessThanOrEqual(capacity * interval + limit * span);
    }
  }
}

/**
 * leakyBucket (limit per interval, queue): requests start at now + delayMs, in arrival order.
 * The exact start of a request is max(now, x) where x = the previous start + its cost ×
 * interval/limit, a fraction of a ms in general; delayMs rounds the wait up to a whole ms, so
 * starts are ceil(exact start) (now is an integer). From ceil(x + y) − ceil(x) ≥ floor(y):
 * two starts with U units of requests between them (the earlier one's included) are at least
 * floor(U × interval / limit) ms apart. For unit costs: k requests apart → ≥ floor(k × interval/limit).
 * The queue bounds the wait: delayMs ≤ ceil((queue + 1 − cost) × interval / limit). The long-run
 * throughput is a token bucket's with burst queue + 1.
 */
function checkLeakyBucket(p: Policy, out: readonly Outcome[], index: number): void {
  const limit = p.limit;
  const interval = p.windowMs;
  const queue = p.capacity - 1;
  const a = admitted(out);
  const starts = a.map((o) => o.t + o.results[index]!.delayMs);
  for (let i = 0; i < a.length; i++) {
    const delay = a[i]!.results[index]!.delayMs;
    expect(delay, `${p.id}: wait of a cost ${a[i]!.cost}`).toBeLessThanOrEqual(
      -floorDiv(-(queue + 1 - a[i]!.cost) * interval, limit),
    );
    let units = 0;
    for (let j = i + 1; j < a.length; j++) {
      units += a[j - 1]!.cost;
      expect(
        starts[j]! - starts[i]!,
        `${p.id}: starts ${i} and ${j}, ${units} units apart`,
      ).toBeGreaterThanOrEqual(floorDiv(units * interval, limit));
    }
  }
  checkTokenBucket(p, out);
}

/** quota: in every calendar period of its zone, admitted units ≤ limit. */
function checkQuota(p: Policy, out: readonly Outcome[]): void {
  const perPeriod = new Map<number, number>();
  for (const o of admitted(out)) {
    const [start] = calendarPeriod(p.calendar!.per, p.calendar!.timeZone, o.t);
    perPeriod.set(start, (perPeriod.get(start) ?? 0) + o.cost);
  }
  for (const [start, units] of perPeriod)
    expect(units, `${p.id}: period from ${start}`).toBeLessThanOrEqual(p.limit);
}

function check(policies: readonly Policy[], out: readonly Outcome[]): void {
  policies.forEach((p, i) => {
    if (p.kind === 'quota') checkQuota(p, out);
    else if (p.kind === 'fixedWindow') checkFixedWindow(p, out);
    else if (p.kind === 'slidingWindowLog') checkSlidingLog(p, out);
    else if (p.kind === 'slidingWindow') checkSlidingWindow(p, out);
    else if (p.kind === 'tokenBucket') checkTokenBucket(p, out);
    else checkLeakyBucket(p, out, i);
  });
}

const policyArbs: Record<Policy['kind'], fc.Arbitrary<Policy>> = {
  fixedWindow: fc.record({ limit: small(8), window: windowMs }).map((o) => fixedWindow(o)),
  slidingWindowLog: fc
    .record({ limit: small(8), window: windowMs })
    .map((o) => slidingWindowLog(o)),
  slidingWindow: fc.record({ limit: small(8), window: windowMs }).map((o) => slidingWindow(o)),
  tokenBucket: fc
    .record({
      limit: small(8),
      interval: windowMs,
      burst: fc.option(small(10), { nil: undefined }),
    })
    .map((o) => tokenBucket(o)),
  leakyBucket: fc
    .record({ limit: small(8), interval: windowMs, queue: small(6) })
    .map((o) => leakyBucket(o)),
  // Zones whose first local midnight after the epoch falls among the arrivals (within 3 hours).
  quota: fc
    .record({
      limit: small(8),
      per: fc.constantFrom('day' as const, 'week' as const, 'month' as const),
      timeZone: fc.constantFrom('UTC', 'Atlantic/Azores', 'Etc/GMT+2', 'America/Sao_Paulo'),
    })
    .map((o) => quota(o)),
};

describe('no window admits more than its policy allows (any arrivals, any cost mix)', () => {
  for (const [kind, arb] of Object.entries(policyArbs)) {
    it(kind, () => {
      fc.assert(
        fc.property(arb, arrivalsArb(8), (p, arrivals) => {
          check([p], simulate([p], fitCosts([p], arrivals)));
        }),
        RUNS,
      );
    });
  }

  it('leakyBucket, unit requests: k requests apart start ≥ floor(k × interval / limit) ms apart', () => {
    fc.assert(
      fc.property(policyArbs.leakyBucket, arrivalsArb(1), (p, arrivals) => {
        const out = admitted(simulate([p], arrivals));
        for (let i = 0; i < out.length; i++) {
          for (let j = i + 1; j < out.length; j++) {
            const gap =
              out[j]!.t + out[j]!.results[0]!.delayMs - (out[i]!.t + out[i]!.results[0]!.delayMs);
            expect(gap).toBeGreaterThanOrEqual(Math.floor(((j - i) * p.windowMs) / p.limit));
          }
        }
      }),
      RUNS,
    );
  });

  it('several policies at once: every policy’s bound holds', () => {
    const policies = fc.uniqueArray(fc.oneof(...Object.values(policyArbs)), {
      minLength: 2,
      maxLength: 3,
      selector: (p) => p.id,
    });
    fc.assert(
      fc.property(policies, arrivalsArb(8), (ps, arrivals) => {
        check(ps, simulate(ps, fitCosts(ps, arrivals)));
      }),
      RUNS,
    );
  });

  it('the bounds are reached: a burst at one instant admits exactly the capacity', () => {
    for (const p of Object.values(policyArbs).flatMap((arb) =>
      fc.sample(arb, { numRuns: 20, seed: 7 }),
    )) {
      const out = simulate(
        [p],
        Array.from({ length: p.capacity + 3 }, () => ({ t: 1_700_000_000_123, cost: 1 })),
      );
      expect(admitted(out).length, p.id).toBe(p.capacity);
    }
  });
});

describe('a caller whose clock is behind never gets more than one on time', () => {
  // For a state written at time M, a request at now < M is admitted only if it would be at M.
  for (const [kind, arb] of Object.entries(policyArbs)) {
    it(kind, () => {
      fc.assert(
        fc.property(
          arb,
          arrivalsArb(8, 40),
          fc.integer({ min: 1, max: 5000 }),
          small(8),
          (p, arrivals, back, c) => {
            const history = fitCosts([p], arrivals);
            const last = history.at(-1)?.t ?? 1_700_000_000_000;
            const cost = 1 + ((c - 1) % p.capacity);
            const late = simulate([p], [...history, { t: last - back, cost }]).at(-1)!;
            const onTime = simulate([p], [...history, { t: last, cost }]).at(-1)!;
            if (late.allowed)
              expect(onTime.allowed, `${p.id}: admitted ${back} ms early`).toBe(true);
          },
        ),
        RUNS,
      );
    });
  }
});

describe('the TTL a store sets is exactly the time until the state is empty', () => {
  // A key must not expire before its state is empty (the store would forget usage), and should
  // not linger after. Checked for every admission, including callers whose clock is behind the
  // key's state: their TTL counts from their own clock.
  for (const [kind, arb] of Object.entries(policyArbs)) {
    it(kind, () => {
      fc.assert(
        fc.property(
          arb,
          arrivalsArb(8, 40),
          fc.integer({ min: 0, max: 3000 }),
          (p, arrivals, back) => {
            const history = fitCosts([p], arrivals);
            const last = history.at(-1)?.t ?? 1_700_000_000_000;
            const times = [...history, { t: last - back, cost: 1 }];
            let state: PolicyState | undefined;
            for (const { t, cost } of times) {
              const o = evaluatePolicy(p, state, t, cost);
              if (!o.allowed) continue;
              state = o.next!;
              const ttl = o.nextResetAfterMs;
              expect(ttl, `${p.id}: a written key expires`).toBeGreaterThanOrEqual(1);
              const atEnd = evaluatePolicy(p, state, t + ttl, 1);
              expect(
                [atEnd.resetAfterMs, atEnd.remaining],
                `${p.id}: empty after ${ttl} ms`,
              ).toEqual([0, p.capacity]);
              expect(
                evaluatePolicy(p, state, t + ttl - 1, 1).resetAfterMs,
                `${p.id}: not before`,
              ).toBe(1);
            }
          },
        ),
        RUNS,
      );
    });
  }
});
