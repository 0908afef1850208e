// Shared by the property tests: runs the reference on a plain Map, as MemoryStore does.
import fc from 'fast-check';
import type { PolicyState } from '../src/policies/common.js';
import type { PolicyResult } from '../src/store.js';
import { evaluateAll } from '../src/store.js';
import type { Policy } from '../src/types.js';

export interface Arrival {
  readonly t: number;
  readonly cost: number;
}

export interface Outcome extends Arrival {
  readonly allowed: boolean;
  readonly results: readonly PolicyResult[];
}

/** Feeds arrivals (times non-decreasing) to one identity under `policies`, charging as a store would. */
export function simulate(policies: readonly Policy[], arrivals: readonly Arrival[]): Outcome[] {
  const states: (PolicyState | undefined)[] = policies.map(() => undefined);
  const keys = policies.map((p) => p.id);
  return arrivals.map(({ t, cost }) => {
    const { results, writes } = evaluateAll({ keys, policies, cost, mode: 'limit' }, states, t);
    writes.forEach((w, i) => {
      if (w === null) states[i] = undefined;
      else if (w !== undefined) states[i] = w.state;
    });
    return { t, cost, allowed: results.every((r) => r.allowed), results };
  });
}

/** Gaps between arrivals: bursts at one instant, close calls, and long pauses. */
const gap = fc.oneof(
  { arbitrary: fc.constant(0), weight: 4 },
  { arbitrary: fc.integer({ min: 1, max: 5 }), weight: 4 },
  { arbitrary: fc.integer({ min: 0, max: 100 }), weight: 2 },
  { arbitrary: fc.integer({ min: 0, max: 3000 }), weight: 1 },
);

/** Non-decreasing arrival times from a random (unaligned) start, with costs in 1..maxCost. */
export function arrivalsArb(maxCost: number, maxLength = 150): fc.Arbitrary<Arrival[]> {
  return fc
    .tuple(
      fc.integer({ min: 0, max: 10_000_000 }),
      fc.array(fc.tuple(gap, fc.integer({ min: 1, max: maxCost })), { maxLength }),
    )
    .map(([start, steps]) => {
      let t = 1_700_000_000_000 + start;
      return steps.map(([dt, cost]) => {
        t += dt;
        return { t, cost };
      });
    });
}
