import type { Cost, Policy, Reservation, ReservingLimiter } from '@floodgate/core';
import { blockKey, encodeIdentity, policyKey, type StoreCall } from '@floodgate/core/store';
import fc from 'fast-check';
import { policiesArb, stepArb } from './arbitraries.js';
import { droppedFor, Reference } from './differential.js';
import { expectCode, type Harness } from './harness.js';

/** One step of a trace: what it does, after how long, with which units per policy index. */
interface Step {
  readonly op: 'limit' | 'reserve' | 'settle' | 'cancel' | 'peek';
  readonly dt: number;
  /** Per policy index: a share of its capacity, in 0..2 (an actual may pass it: debt). */
  readonly shares: readonly number[];
  /** Which open reservation a settle or cancel takes. */
  readonly pick: number;
}

const stepsArb = (scale: number): fc.Arbitrary<Step[]> =>
  fc.array(
    fc.record({
      op: fc.oneof(
        { arbitrary: fc.constant<'limit'>('limit'), weight: 3 },
        { arbitrary: fc.constant<'reserve'>('reserve'), weight: 3 },
        { arbitrary: fc.constant<'settle'>('settle'), weight: 3 },
        { arbitrary: fc.constant<'cancel'>('cancel'), weight: 1 },
        { arbitrary: fc.constant<'peek'>('peek'), weight: 1 },
      ),
      dt: stepArb(scale),
      shares: fc.array(fc.double({ min: 0, max: 2, noNaN: true }), {
        minLength: 3,
        maxLength: 3,
      }),
      pick: fc.nat(),
    }),
    { minLength: 1, maxLength: 40 },
  );

/**
 * Units per policy from `shares`: within each capacity for an admission (at least one unit
 * somewhere), up to twice it for an actual cost.
 */
function unitsOf(
  policies: readonly Policy[],
  shares: readonly number[],
  actual: boolean,
): number[] {
  const units = policies.map((p, i): number => {
    const share = actual ? shares[i]! : Math.min(1, shares[i]!);
    return Math.floor(share * p.capacity);
  });
  if (!actual && !units.some((u) => u > 0)) units[0] = 1;
  return units;
}

/**
 * A record of units by policy name, and the units it charges each policy (names may repeat).
 * Policies of one name share its units: the fewest any of them was given, so an admission's
 * stays within each one's capacity (the last one's could exceed another's: a fixedWindow of 3
 * and a tokenBucket of 4 both named "3-per-700ms" drew a cost of 4, COST_EXCEEDS_CAPACITY).
 */
function recordOf(policies: readonly Policy[], units: readonly number[]): [Cost, number[]] {
  const record: Record<string, number> = {};
  policies.forEach((p, i) => {
    const given = record[p.name];
    record[p.name] = given === undefined ? units[i]! : Math.min(given, units[i]!);
  });
  // Policies of one name share its units: an admission must still charge something.
  if (Object.values(record).every((u) => u === 0)) record[policies[0]!.name] = 1;
  return [record, policies.map((p) => record[p.name]!)];
}

/** The keys a limiter builds for `id`: one per policy, then a block key per blocking policy. */
function keysOf(prefix: string, policies: readonly Policy[], id: string): string[] {
  const own = policies.map((p) => policyKey(prefix, encodeIdentity(id), p.id));
  const blocks = policies.flatMap((p, i) =>
    p.blockForMs === undefined ? [] : [blockKey(own[i]!)],
  );
  return [...own, ...blocks];
}

/** A peek compared with the reference, which then drops the keys the store has lost. */
async function sync(
  h: Harness,
  kept: Reference,
  limiter: ReservingLimiter,
  policies: readonly Policy[],
  keys: readonly string[],
  now: number,
): Promise<void> {
  const call: StoreCall = { keys, policies, cost: 1, mode: 'peek' };
  const actual = await limiter.peek('a');
  const chosen = droppedFor(h, kept, policies, call, now, actual);
  h.expect(actual, 'a peek before a settle').toEqual(
    kept.evaluate(policies, call, now, chosen).decision,
  );
  kept.evaluate(policies, call, now, chosen).apply(Date.now());
}

/**
 * Per-policy costs and reservations (`Cost` records, `reserve`, `settle`, `cancel`) in random
 * traces, every decision compared field for field with the TypeScript reference (`evaluateAll`
 * on the calls the limiter makes): debt, refunds, settles after a window's end, on any mix of kinds.
 */
export function registerCosts(h: Harness): void {
  h.api.describe('per-policy costs and reservations, against the TypeScript reference', () => {
    h.test(
      'random traces of cost records, reserve, settle and cancel equal the reference',
      async (run) => {
        let n = 0;
        const property = fc.asyncProperty(
          policiesArb(undefined, h.scale),
          stepsArb(h.scale),
          async (policies, steps) => {
            const prefix = `${run.prefix}c${++n}`;
            run.advance(1_000_000);
            const limiter = run.limiter(policies, prefix);
            const keys = keysOf(prefix, policies, 'a');
            const kept = new Reference(false);
            const open: { r: Reservation; estimate: number[]; at: number }[] = [];
            for (let i = 0; i < steps.length; i++) {
              const { op, dt, shares, pick } = steps[i]!;
              run.advance(dt);
              const what = `step ${i}: ${op} at +${dt} ms`;
              if (op === 'settle' || op === 'cancel') {
                const held = open.splice(pick % Math.max(1, open.length), 1)[0];
                if (held === undefined) continue;
                const [actual, units] = recordOf(policies, unitsOf(policies, shares, true));
                const settle = () => (op === 'cancel' ? held.r.cancel() : held.r.settle(actual));
                if (!held.r.allowed) {
                  await expectCode(h, `${what} of a denial`, 'RESERVATION_DENIED', settle);
                  continue;
                }
                // A key whose TTL ran out in real time is seen by a peek first: a settle's own
                // writes are not compared, so the reference must know what the store holds.
                if (h.realTimeExpiry) await sync(h, kept, limiter, policies, keys, run.now);
                await settle();
                // A give-back its policy no longer counts is dropped (core's reserve.ts heldMs).
                const elapsed = run.now - held.at;
                const spent = op === 'cancel' ? held.estimate.map(() => 0) : units;
                const costs = spent.map((u, j) => {
                  const d = u - held.estimate[j]!;
                  const p = policies[j]!;
                  const reset = held.r.policies[j]!.resetAfterMs;
                  const counted = reset - (p.kind === 'slidingWindow' ? p.windowMs : 0);
                  return d < 0 && elapsed >= counted ? 0 : d;
                });
                if (costs.every((c) => c === 0)) continue;
                const call: StoreCall = {
                  keys,
                  policies,
                  cost: Math.max(...costs.map(Math.abs)),
                  costs,
                  mode: 'settle',
                };
                kept.evaluate(policies, call, run.now, new Set()).apply(Date.now());
                continue;
              }
              const [cost, units] = recordOf(policies, unitsOf(policies, shares, false));
              const first = units[0]!;
              const one = units.every((u) => u === first);
              const call: StoreCall =
                op === 'peek'
                  ? { keys, policies, cost: 1, mode: 'peek' }
                  : {
                      keys,
                      policies,
                      cost: one ? first : Math.max(...units),
                      ...(one ? {} : { costs: units }),
                      mode: 'limit',
                    };
              const before = Date.now();
              const actual =
                op === 'peek'
                  ? await limiter.peek('a')
                  : op === 'limit'
                    ? await limiter.limit('a', { cost })
                    : await limiter.reserve('a', { cost });
              if (op === 'reserve')
                open.push({ r: actual as Reservation, estimate: units, at: run.now });
              const { settle: _s, cancel: _c, ...decision } = actual as Partial<Reservation>;
              const chosen = droppedFor(h, kept, policies, call, run.now, decision);
              h.expect(decision, `${what} ${JSON.stringify(cost)}`).toEqual(
                kept.evaluate(policies, call, run.now, chosen).decision,
              );
              kept.evaluate(policies, call, run.now, chosen).apply(before);
            }
          },
        );
        await fc.assert(property, { numRuns: h.numRuns });
      },
    );
  });
}
