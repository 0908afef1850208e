import {
  type Decision,
  encodeIdentity,
  evaluateAll,
  type PolicyKind,
  type PolicyState,
  policyKey,
  toDecision,
} from '@floodgate/core';
import fc from 'fast-check';
import { fitCost, opArb, POLICY_KINDS, policiesArb } from './arbitraries.js';
import { expectTtls, type Harness } from './harness.js';

const IDENTITIES = ['a', '{a}:'] as const;

/**
 * Random traces on the suite's clock (monotone, random costs, limit/peek/reset), every decision
 * compared field for field with the TypeScript reference: `evaluateAll` over a plain Map of
 * states that never expires anything. So this also checks that a store which drops a key when
 * its TTL runs out (MemoryStore, Redis) decides exactly as one that keeps it.
 */
export function registerDifferential(h: Harness): void {
  const differential = (name: string, kind: PolicyKind | undefined) =>
    h.test(`random traces equal the reference: ${name}`, async (run) => {
      let n = 0;
      const traceArb = fc.array(opArb, { minLength: 1, maxLength: 40 });
      await fc.assert(
        fc.asyncProperty(
          policiesArb(kind),
          traceArb,
          fc.nat(100_000),
          async (policies, trace, start) => {
            const prefix = `${run.prefix}r${++n}`;
            run.advance(1_000_000 + start);
            const limiter = run.limiter(policies, prefix);
            const states = new Map<string, PolicyState>();
            const keysOf = (id: string) =>
              policies.map((p) => policyKey(prefix, encodeIdentity(id), p.id));
            for (let i = 0; i < trace.length; i++) {
              const { op, dt, who, cost: c } = trace[i]!;
              const id = IDENTITIES[who]!;
              const keys = keysOf(id);
              run.advance(dt);
              if (op === 'reset') {
                await limiter.reset(id);
                for (const k of keys) states.delete(k);
                continue;
              }
              const cost = fitCost(c, policies);
              const call = { keys, policies, cost, mode: op } as const;
              const { results, writes } = evaluateAll(
                call,
                keys.map((k) => states.get(k)),
                run.now,
              );
              writes.forEach((w, j) => {
                if (w !== undefined) states.set(keys[j]!, w.state);
              });
              const expected: Decision = toDecision(policies, results);
              const actual =
                op === 'peek' ? await limiter.peek(id) : await limiter.limit(id, { cost });
              h.expect(
                actual,
                `step ${i}: ${op} ${JSON.stringify(id)} cost ${cost} at +${dt} ms`,
              ).toEqual(expected);
              if (op === 'limit' && actual.allowed)
                await expectTtls(h, run, limiter, id, actual, prefix);
            }
            const live = await run.liveKeys(prefix);
            if (live !== undefined) {
              const known = new Set(IDENTITIES.flatMap(keysOf));
              h.expect(
                live.filter((k) => !known.has(k)),
                'keys outside the layout',
              ).toEqual([]);
            }
          },
        ),
        { numRuns: h.numRuns },
      );
    });

  h.api.describe(
    'differential: random traces, field for field against the TypeScript reference',
    () => {
      for (const kind of POLICY_KINDS) differential(kind, kind);
      differential('1–3 policies of any kind', undefined);
    },
  );
}
