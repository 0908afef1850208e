import type { Policy, PolicyKind } from '@floodgate/core';
import fc from 'fast-check';
import { costArb, fitCost, POLICY_KINDS, policiesArb, stepArb } from './arbitraries.js';
import { fields, type Harness, type Run } from './harness.js';

const prefillArb = (scale: number) =>
  fc.array(fc.record({ dt: stepArb(scale), cost: costArb }), { maxLength: 12 });

/** Fills a key with a random history; returns the limiter. */
async function prefill(
  run: Run,
  policies: Policy[],
  prefix: string,
  steps: { dt: number; cost: number }[],
) {
  const l = run.limiter(policies, prefix);
  for (const s of steps) {
    run.advance(s.dt);
    await l.limit('k', { cost: fitCost(s.cost, policies) });
  }
  return l;
}

export function registerRetry(h: Harness): void {
  const tight = (name: string, kind: PolicyKind | undefined, minPolicies: number) =>
    h.test(`retryAfterMs is tight: ${name}`, async (run) => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          policiesArb(kind, h.scale, minPolicies),
          prefillArb(h.scale),
          costArb,
          async (policies, steps, c) => {
            run.advance(1_000_000);
            const l = await prefill(run, policies, `${run.prefix}r${++n}`, steps);
            const cost = fitCost(c, policies);
            // Charge until denied: a capacity's worth at one instant is always enough.
            let d = await l.limit('k', { cost });
            for (let i = 0; d.allowed && i <= policies[0]!.capacity; i++)
              d = await l.limit('k', { cost });
            h.expect(d.allowed, 'denied after the capacity is spent').toBe(false);
            const r = d.retryAfterMs;
            h.expect(r, 'retryAfterMs of a denial').toBeGreaterThanOrEqual(1);
            h.expect(r, 'the decision waits for the slowest policy').toBe(
              Math.max(...d.policies.map((p) => p.retryAfterMs)),
            );
            for (const p of d.policies) {
              h.expect(
                p.allowed === (p.retryAfterMs === 0),
                `${p.kind}: retry 0 iff it admits`,
              ).toBe(true);
            }
            run.advance(r - 1);
            const early = await l.limit('k', { cost });
            h.expect(
              [early.allowed, early.retryAfterMs],
              `cost ${cost}, 1 ms before ${r} ms`,
            ).toEqual([false, 1]);
            run.advance(1);
            const onTime = await l.limit('k', { cost });
            h.expect(onTime.allowed, `cost ${cost}, at exactly ${r} ms`).toBe(true);
          },
        ),
        { numRuns: h.numRuns },
      );
    });

  h.api.describe(
    'retryAfterMs is tight: admitted at exactly retryAfterMs, denied 1 ms earlier',
    () => {
      for (const kind of POLICY_KINDS) tight(kind, kind, 1);
      tight('several policies', undefined, 2);
    },
  );

  h.api.describe('resetAfterMs is tight: the state is empty exactly then', () => {
    h.test('random histories, 1–3 policies', async (run) => {
      let n = 0;
      await fc.assert(
        fc.asyncProperty(
          policiesArb(undefined, h.scale),
          prefillArb(h.scale),
          async (policies, steps) => {
            run.advance(1_000_000);
            const l = await prefill(run, policies, `${run.prefix}r${++n}`, steps);
            const p = await l.peek('k');
            const r = p.resetAfterMs;
            h.expect(r, 'resetAfterMs is the largest of the policies').toBe(
              Math.max(...p.policies.map((x) => x.resetAfterMs)),
            );
            if (r === 0) return;
            run.advance(r - 1);
            h.expect((await l.peek('k')).resetAfterMs, `1 ms before ${r} ms`).toBe(1);
            run.advance(1);
            const empty = await l.peek('k');
            h.expect(fields(empty), `at exactly ${r} ms: as if never used`).toEqual(
              fields(await l.peek('never')),
            );
            h.expect(empty.remaining, 'the full capacity').toBe(
              Math.min(...policies.map((x) => x.capacity)),
            );
          },
        ),
        { numRuns: h.numRuns },
      );
    });
  });
}
