import {
  type Decision,
  fixedWindow,
  isFloodgateError,
  type Limiter,
  type Policy,
} from '@floodgate/core';
import fc from 'fast-check';
import { costArb, fitCost, mixedPoliciesArb, stepArb } from './arbitraries.js';
import type { Harness } from './harness.js';

// The composition rule for shadow policies (DESIGN.md, "Composition rules"): the enforced
// policies of a limiter decide and charge exactly as if its shadowed policies were not there.
// Checked on random mixes (every kind, costs, blockFor) and random operations (limit, wait,
// refunds of an admission, peek, reset): a limiter with the mix and one with only its enforced
// policies, on the same store under two prefixes, must give the same answers and counts.

type Step =
  | { readonly op: 'limit' | 'wait'; readonly dt: number; readonly cost: number }
  | { readonly op: 'refund' | 'peek' | 'reset'; readonly dt: number; readonly cost: number };

const stepsArb = (scale: number) =>
  fc.array(
    fc.record({
      op: fc.oneof(
        { arbitrary: fc.constant<'limit'>('limit'), weight: 8 },
        { arbitrary: fc.constant<'wait'>('wait'), weight: 2 },
        { arbitrary: fc.constant<'refund'>('refund'), weight: 2 },
        { arbitrary: fc.constant<'peek'>('peek'), weight: 1 },
        { arbitrary: fc.constant<'reset'>('reset'), weight: 1 },
      ),
      dt: stepArb(scale),
      cost: costArb,
    }) as fc.Arbitrary<Step>,
    { minLength: 1, maxLength: 30 },
  );

/** What a client is shown of a decision (the enforced policies' figures), or the error code. */
function shown(d: Decision | string): unknown {
  if (typeof d === 'string') return d;
  const { allowed, limit, remaining, resetAfterMs, retryAfterMs, delayMs, policies } = d;
  return { allowed, limit, remaining, resetAfterMs, retryAfterMs, delayMs, policies };
}

async function attempt(p: Promise<Decision>): Promise<Decision | string> {
  try {
    return await p;
  } catch (e) {
    if (isFloodgateError(e)) return e.code;
    throw e;
  }
}

export function registerShadowComposition(h: Harness): void {
  h.api.describe('shadowed policies beside enforced ones', () => {
    // On a store whose TTLs run on real time while the suite's clock stands still, the two
    // limiters' keys could expire a call apart: the differential trace with shadowed policies
    // (differential.ts) covers those stores against the same reference this one runs on.
    if (h.controlsTime && !h.realTimeExpiry)
      h.test(
        'random mixes: the enforced policies admit and count as if the shadowed were absent',
        async (run) => {
          let n = 0;
          const property = fc.asyncProperty(
            mixedPoliciesArb(h.scale),
            stepsArb(h.scale),
            async (policies: Policy[], steps) => {
              const enforcedOnly = policies.filter((p) => p.shadow !== true);
              const prefix = `${run.prefix}m${++n}`;
              const mixed = run.limiter(policies, `${prefix}a`);
              const alone = run.limiter(enforcedOnly, `${prefix}b`);
              // The last admission of each, given back by a refund step (with its decision).
              let last: [Decision, Decision, number] | undefined;
              for (let i = 0; i < steps.length; i++) {
                const s = steps[i]!;
                run.advance(s.dt);
                const cost = fitCost(s.cost, policies);
                const what = `step ${i}: ${s.op} cost ${cost}`;
                if (s.op === 'reset') {
                  await Promise.all([mixed.reset('k'), alone.reset('k')]);
                  last = undefined;
                  continue;
                }
                if (s.op === 'refund') {
                  if (last === undefined) continue;
                  const [dm, da, c] = last;
                  await mixed.refund('k', { cost: c, decision: dm });
                  await alone.refund('k', { cost: c, decision: da });
                  last = undefined;
                  continue;
                }
                const pair = async (l: Limiter) => {
                  if (s.op === 'peek') return attempt(l.peek('k'));
                  if (s.op === 'wait') return attempt(l.wait('k', { cost, maxWaitMs: 0 }));
                  return attempt(l.limit('k', { cost }));
                };
                const m = await pair(mixed);
                const a = await pair(alone);
                h.expect(shown(m), what).toEqual(shown(a));
                if (typeof m !== 'string' && typeof a !== 'string') {
                  h.expect(m.shadowed?.length, `${what}: shadowed reported apart`).toBe(
                    policies.length - enforcedOnly.length,
                  );
                  if (s.op !== 'peek' && m.allowed && m.reason === undefined) last = [m, a, cost];
                }
              }
              const [pm, pa] = [await mixed.peek('k'), await alone.peek('k')];
              h.expect(shown(pm), 'the enforced counts at the end').toEqual(shown(pa));
            },
          );
          await fc.assert(property, { numRuns: h.numRuns });
        },
      );

    h.test('a shadowed policy is charged only when every policy admits', async (run) => {
      // Once the watched window would deny, the enforced one goes on counting alone.
      const watched = fixedWindow({ name: 'watched', limit: 2, window: '1h', shadow: true });
      const hard = fixedWindow({ name: 'hard', limit: 5, window: '1h' });
      const l = run.limiter([hard, watched]);
      const seen: boolean[] = [];
      for (let i = 0; i < 7; i++) seen.push((await l.limit('k')).allowed);
      h.expect(seen, 'the enforced limit holds: 5 of 7').toEqual([
        true,
        true,
        true,
        true,
        true,
        false,
        false,
      ]);
      const p = await l.peek('k');
      h.expect(p.remaining, 'hard: all 5 used').toBe(0);
      h.expect(p.shadowed?.[0]?.remaining, 'watched: its 2, no more').toBe(0);
      const enforcedCopy = run.limiter(fixedWindow({ name: 'watched', limit: 2, window: '1h' }));
      h.expect((await enforcedCopy.peek('k')).remaining, 'watched shares its state').toBe(0);
    });
  });
}
