// The invariants of a limit that changes (docs/algorithms.md, "Keys, and a limit that changes"),
// for any arrival pattern and cost mix: one policy (kind, name, window) whose limit, burst or
// queue changes at random steps, on one state, as a store keeps it.
// - Counted kinds: no window admits more than the largest limit in force in it, every decision is
//   the kind's rule applied to the units already counted under whichever limit (so a lowered
//   limit denies at once when the count is above it), and `remaining` is never below 0.
// - Buckets: the arrival time is kept in time (never earlier than exact time-keeping; later by
//   less than 1 ms per change, 2 for a token bucket), and a token bucket's state read by a policy
//   that fills slower is moved later by the difference of the fill times (token_bucket.ts
//   fillShift), so a bucket admits nothing that exact model would not; over any span a token
//   bucket admits at most the largest burst plus the fastest refill, a leaky bucket at most what
//   one of the largest rate and the longest refill time admits.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  fixedWindow,
  leakyBucket,
  type Policy,
  type PolicyKind,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import type { PolicyState } from '../src/policies/common.js';
import { evaluatePolicy } from '../src/policies/compose.js';

const RUNS = { numRuns: 300 };
const DAY = 86_400_000;

interface Variant {
  readonly limit: number;
  /** A bucket's burst (undefined: the default, = limit) or a leaky bucket's queue. */
  readonly extra: number | undefined;
}

function build(kind: PolicyKind, w: number, v: Variant, name: string | undefined): Policy {
  const named = name === undefined ? {} : { name };
  switch (kind) {
    case 'fixedWindow':
      return fixedWindow({ limit: v.limit, window: w, ...named });
    case 'slidingWindow':
      return slidingWindow({ limit: v.limit, window: w, ...named });
    case 'slidingWindowLog':
      return slidingWindowLog({ limit: v.limit, window: w, ...named });
    case 'quota':
      return quota({ limit: v.limit, per: 'day', ...named });
    case 'tokenBucket':
      return tokenBucket({ limit: v.limit, interval: w, burst: v.extra, ...named });
    case 'leakyBucket':
      return leakyBucket({ limit: v.limit, interval: w, queue: v.extra ?? 1, ...named });
  }
}

interface Step {
  readonly t: number;
  readonly cost: number;
  /** The variant in force for this call. */
  readonly policy: Policy;
}

interface Seen extends Step {
  readonly allowed: boolean;
  readonly remaining: number;
  readonly delayMs: number;
  readonly before: PolicyState | undefined;
  readonly after: PolicyState | undefined;
}

const gap = fc.oneof(
  { arbitrary: fc.constant(0), weight: 4 },
  { arbitrary: fc.integer({ min: 1, max: 5 }), weight: 4 },
  { arbitrary: fc.integer({ min: 0, max: 100 }), weight: 2 },
  { arbitrary: fc.integer({ min: 0, max: 2000 }), weight: 1 },
);

/** A policy family (kind, window, name) in 2–3 variants, and calls that switch among them. */
function traceArb(kind: PolicyKind, proportional = false) {
  const variant = fc.record({
    limit: fc.integer({ min: 1, max: 9 }),
    extra: proportional
      ? fc.constant(undefined)
      : kind === 'leakyBucket'
        ? fc.integer({ min: 1, max: 9 })
        : fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
  });
  return fc
    .record({
      w: fc.oneof(fc.integer({ min: 1, max: 50 }), fc.constantFrom(7, 60, 100, 1000, 1001)),
      name: fc.option(fc.constantFrom('api', 'plan'), { nil: undefined }),
      variants: fc.array(variant, { minLength: 2, maxLength: 3 }),
      start: fc.integer({ min: 0, max: 10_000_000 }),
      steps: fc.array(fc.tuple(gap, fc.integer({ min: 1, max: 9 }), fc.nat()), {
        maxLength: 120,
      }),
    })
    .map(({ w, name, variants, start, steps }) => {
      const policies = variants.map((v) => build(kind, w, v, name));
      // A quota's period is a day: its steps are minutes, so a trace crosses several midnights.
      const unit = kind === 'quota' ? 60_000 : 1;
      let t = 1_700_000_000_000 + start * unit;
      const out: Step[] = steps.map(([dt, cost, which]) => {
        t += dt * unit;
        const policy = policies[which % policies.length]!;
        return { t, cost: 1 + ((cost - 1) % policy.capacity), policy };
      });
      return { policies, steps: out };
    });
}

/** Runs the steps as a store does: one state per policy id (all the variants share one). */
function run(steps: readonly Step[]): Seen[] {
  const states = new Map<string, PolicyState>();
  return steps.map((s) => {
    const before = states.get(s.policy.id);
    const o = evaluatePolicy(s.policy, before, s.t, s.cost);
    if (o.allowed) states.set(s.policy.id, o.next!);
    return {
      ...s,
      allowed: o.allowed,
      remaining: o.remaining,
      delayMs: o.delayMs,
      before,
      after: states.get(s.policy.id),
    };
  });
}

/** Units admitted at times in [from, to] (closed), or (from, to] with `open`. */
function units(seen: readonly Seen[], from: number, to: number, open = false): number {
  let sum = 0;
  for (const s of seen) {
    if (s.allowed && (open ? s.t > from : s.t >= from) && s.t <= to) sum += s.cost;
  }
  return sum;
}

describe('a limit that changes: counted kinds', () => {
  it('fixedWindow and quota: per window (day), at most the largest limit in force; each decision is count + cost ≤ limit', () => {
    for (const kind of ['fixedWindow', 'quota'] as const) {
      fc.assert(
        fc.property(traceArb(kind), ({ policies, steps }) => {
          const seen = run(steps);
          const w = kind === 'quota' ? DAY : policies[0]!.windowMs;
          const largest = new Map<number, number>();
          const admitted = new Map<number, number>();
          for (let i = 0; i < seen.length; i++) {
            const s = seen[i]!;
            const k = Math.floor(s.t / w);
            const count = units(seen.slice(0, i), k * w, s.t);
            const limit = s.policy.limit;
            expect(s.allowed, `step ${i}`).toBe(count + s.cost <= limit);
            expect(s.remaining, `step ${i}`).toBe(Math.max(0, limit - count));
            largest.set(k, Math.max(largest.get(k) ?? 0, limit));
            if (s.allowed) admitted.set(k, (admitted.get(k) ?? 0) + s.cost);
          }
          for (const [k, n] of admitted) expect(n).toBeLessThanOrEqual(largest.get(k)!);
        }),
        RUNS,
      );
    }
  });

  it('slidingWindowLog: in every (t − window, t], at most the limit of its last admission; each decision is the log rule', () => {
    fc.assert(
      fc.property(traceArb('slidingWindowLog'), ({ policies, steps }) => {
        const seen = run(steps);
        const w = policies[0]!.windowMs;
        for (let i = 0; i < seen.length; i++) {
          const s = seen[i]!;
          const count = units(seen.slice(0, i), s.t - w, s.t, true);
          const limit = s.policy.limit;
          expect(s.allowed, `step ${i}`).toBe(count + s.cost <= limit);
          expect(s.remaining, `step ${i}`).toBe(Math.max(0, limit - count));
          // Every window ending at an admission holds at most that admission's limit.
          if (s.allowed) {
            expect(units(seen.slice(0, i + 1), s.t - w, s.t, true)).toBeLessThanOrEqual(limit);
          }
        }
      }),
      RUNS,
    );
  });

  it('slidingWindow: both counts carry over, each decision is the weighted rule under its limit, and no window holds more than the largest limit in it', () => {
    fc.assert(
      fc.property(traceArb('slidingWindow'), ({ policies, steps }) => {
        const seen = run(steps);
        const w = policies[0]!.windowMs;
        const largest = new Map<number, number>();
        const admitted = new Map<number, number>();
        for (let i = 0; i < seen.length; i++) {
          const s = seen[i]!;
          const start = Math.floor(s.t / w) * w;
          const cur = units(seen.slice(0, i), start, s.t);
          const prev = units(seen.slice(0, i), start - w, start - 1);
          const weighted = prev * (w - (s.t - start));
          const limit = s.policy.limit;
          expect(s.allowed, `step ${i}`).toBe(weighted + (cur + s.cost) * w <= limit * w);
          const left = Math.floor((limit * w - weighted) / w) - cur;
          expect(s.remaining, `step ${i}`).toBe(Math.max(0, left));
          const k = start / w;
          largest.set(k, Math.max(largest.get(k) ?? 0, limit));
          if (s.allowed) admitted.set(k, (admitted.get(k) ?? 0) + s.cost);
        }
        for (const [k, n] of admitted) expect(n).toBeLessThanOrEqual(largest.get(k)!);
      }),
      RUNS,
    );
  });
});

// Exact rationals for the buckets' model: a time in ms is n / d.
interface Q {
  readonly n: bigint;
  readonly d: bigint;
}
const q = (n: bigint, d = 1n): Q => ({ n, d });
const add = (a: Q, b: Q): Q => q(a.n * b.d + b.n * a.d, a.d * b.d);
const sub = (a: Q, b: Q): Q => q(a.n * b.d - b.n * a.d, a.d * b.d);
const cmp = (a: Q, b: Q): number => {
  const x = a.n * b.d - b.n * a.d;
  return x > 0n ? 1 : x < 0n ? -1 : 0;
};
const max = (a: Q, b: Q): Q => (cmp(a, b) >= 0 ? a : b);
const B = (x: number) => BigInt(x);

/** A kernel state's arrival time, `[ms, ticks, ticksPerMs]`, as an exact time. */
const tatOf = (s: PolicyState): Q => add(q(B(s[0]!)), q(B(s[1]!), B(s[2]!)));

/** A bucket's burst (capacity) and rate as the factories define them: capacity per interval. */
const unitMs = (p: Policy): Q => q(B(p.windowMs), B(p.limit));

describe('a limit that changes: buckets keep their arrival time', () => {
  for (const kind of ['tokenBucket', 'leakyBucket'] as const) {
    it(`${kind}: never admits what the exact model would not, drifts under 1 ms (a token bucket 2) per change, and stays within the largest rate and longest refill time`, () => {
      fc.assert(
        fc.property(traceArb(kind), ({ policies, steps }) => {
          const seen = run(steps);
          const interval = policies[0]!.windowMs;
          // The exact model: the arrival time as a rational, charged only where the kernel admitted.
          let tat: Q | undefined;
          // A token bucket's exact model also keeps the fill time of the policy that last wrote
          // (token_bucket.ts fillShift): a state read by a policy that fills slower is that much
          // further from full. It applies while the stored state is there: the kernel's key.
          let fill: Q | undefined;
          let changes = 0;
          let last: Policy | undefined;
          for (let i = 0; i < seen.length; i++) {
            const s = seen[i]!;
            if (last !== undefined && s.policy !== last) changes++;
            last = s.policy;
            const now = q(B(s.t));
            const tau = q(B(s.policy.capacity * s.policy.windowMs), B(s.policy.limit));
            const stored = s.before !== undefined && cmp(tatOf(s.before), now) > 0;
            let ahead = tat === undefined ? q(0n) : max(q(0n), sub(tat, now));
            if (kind === 'tokenBucket' && stored && fill !== undefined && cmp(tau, fill) > 0) {
              ahead = add(ahead, sub(tau, fill));
            }
            const charge = q(B(s.cost * s.policy.windowMs), B(s.policy.limit));
            // A lowered limit (burst, queue) denies at once what the kept time does not fit.
            if (s.allowed) expect(cmp(add(ahead, charge), tau), `step ${i}`).toBeLessThanOrEqual(0);
            if (s.allowed) {
              tat = add(now, add(ahead, charge));
              fill = tau;
              // Later than exact by less than one tick per change for the arrival time's rescale,
              // and a token bucket's fill-time shift by less than one more (ticks are at most
              // 1 ms), never earlier.
              const drift = sub(tatOf(s.after!), tat);
              const perChange = kind === 'tokenBucket' ? 2n : 1n;
              expect(cmp(drift, q(0n)), `step ${i}: drift`).toBeGreaterThanOrEqual(0);
              expect(cmp(drift, q(B(changes) * perChange)), `step ${i}: drift`).toBeLessThanOrEqual(
                0,
              );
              if (changes === 0) expect(cmp(drift, q(0n))).toBe(0);
            }
          }
          // Over any span between two admissions, at most limitMax × (span + refill) / interval,
          // the refill time (burst × interval / limit) the longest of the variants in the trace.
          const used = [...new Set(seen.map((s) => s.policy))];
          if (used.length === 0) return;
          const limitMax = Math.max(...used.map((p) => p.limit));
          const refill = used
            .map((p) => q(B(p.capacity * p.windowMs), B(p.limit)))
            .reduce((a, b) => max(a, b));
          const admitted = seen.filter((s) => s.allowed);
          for (let a = 0; a < admitted.length; a++) {
            let sum = 0;
            for (let b = a; b < admitted.length; b++) {
              sum += admitted[b]!.cost;
              const span = q(B(admitted[b]!.t - admitted[a]!.t));
              const bound = add(span, refill);
              // sum ≤ limitMax × bound / interval
              expect(
                cmp(q(B(sum * interval)), q(bound.n * B(limitMax), bound.d)),
                `admissions ${a}..${b}`,
              ).toBeLessThanOrEqual(0);
            }
          }
          if (kind === 'leakyBucket') {
            // Starts stay apart by at least the fastest spacing: no two requests leave together.
            const fastest = used.map(unitMs).reduce((a, b) => (cmp(a, b) <= 0 ? a : b));
            for (let k = 1; k < admitted.length; k++) {
              const p = admitted[k - 1]!;
              const c = admitted[k]!;
              const apart = c.t + c.delayMs - (p.t + p.delayMs);
              const floor = (B(p.cost) * fastest.n) / fastest.d;
              expect(B(apart), `starts ${k - 1}, ${k}`).toBeGreaterThanOrEqual(floor);
            }
          }
        }),
        RUNS,
      );
    });
  }

  it('tokenBucket, any bursts: over any span, at most the largest burst plus the fastest refill', () => {
    fc.assert(
      fc.property(traceArb('tokenBucket'), ({ policies, steps }) => {
        const seen = run(steps).filter((s) => s.allowed);
        const interval = policies[0]!.windowMs;
        const burstMax = Math.max(...policies.map((p) => p.capacity));
        const limitMax = Math.max(...policies.map((p) => p.limit));
        for (let a = 0; a < seen.length; a++) {
          let sum = 0;
          for (let b = a; b < seen.length; b++) {
            sum += seen[b]!.cost;
            // burstMax + limitMax × span / interval, in integers.
            const span = seen[b]!.t - seen[a]!.t;
            expect(sum * interval, `admissions ${a}..${b}`).toBeLessThanOrEqual(
              burstMax * interval + limitMax * span,
            );
          }
        }
      }),
      { numRuns: 1000 },
    );
  });

  it('tokenBucket: 100/min with burst 20 spent, then 10/min with burst 10, admits nothing more in that minute (it saw 8 before the fill time was kept)', () => {
    const fast = tokenBucket({ limit: 100, interval: '1m', burst: 20, name: 'plan' });
    const slow = tokenBucket({ limit: 10, interval: '1m', burst: 10, name: 'plan' });
    const t0 = 1_700_000_000_000;
    const steps: Step[] = [];
    for (let i = 0; i < 20; i++) steps.push({ t: t0, cost: 1, policy: fast });
    for (let i = 0; i < 20; i++) steps.push({ t: t0 + 1, cost: 1, policy: slow });
    const seen = run(steps);
    expect(seen.slice(0, 20).every((s) => s.allowed)).toBe(true);
    expect(seen.slice(20).filter((s) => s.allowed)).toHaveLength(0);
    // And it comes back at the slow policy's rate: one token each 6 s from empty.
    const later = run([...steps, { t: t0 + 60_000 - 1, cost: 1, policy: slow }]);
    expect(later.at(-1)!.allowed).toBe(true);
  });
});
