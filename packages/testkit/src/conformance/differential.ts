import {
  type Decision,
  encodeIdentity,
  evaluateAll,
  type Policy,
  type PolicyKind,
  type PolicyState,
  policyKey,
  type StoreCall,
  toDecision,
} from '@floodgate/core';
import fc from 'fast-check';
import { fitCost, opArb, POLICY_KINDS, policiesArb } from './arbitraries.js';
import { expectTtls, type Harness } from './harness.js';

const IDENTITIES = ['a', '{a}:'] as const;

/**
 * The reference store: `evaluateAll` over a plain Map. `expiring` drops a key when read more
 * than its TTL after it was written (as MemoryStore does, on the clock of the read); otherwise
 * states are kept forever.
 */
class Reference {
  readonly #states = new Map<string, { state: PolicyState; at: number; ttl: number }>();
  constructor(readonly expiring: boolean) {}

  decide(policies: readonly Policy[], call: StoreCall, now: number): Decision {
    const states = call.keys.map((k) => {
      const e = this.#states.get(k);
      if (e !== undefined && this.expiring && now - e.at > e.ttl) this.#states.delete(k);
      return this.#states.get(k)?.state;
    });
    const { results, writes } = evaluateAll(call, states, now);
    writes.forEach((w, j) => {
      if (w !== undefined)
        this.#states.set(call.keys[j]!, { state: w.state, at: now, ttl: w.ttlMs });
    });
    return toDecision(policies, results);
  }

  reset(keys: readonly string[]): void {
    for (const k of keys) this.#states.delete(k);
  }
}

/**
 * Random traces on the suite's clock (random costs, limit/peek/reset on two identities), every
 * decision compared field for field with the TypeScript reference.
 *
 * With monotone time a key that expires when its TTL runs out (MemoryStore, Redis) must decide
 * exactly as one kept forever, so the trace is run on both references, which must agree, and the
 * store must equal them. With skewed callers (time sometimes going back) they can rightly part:
 * once a key has expired on a later clock, a caller behind it finds the key empty where a kept
 * state would still count. The comparison then runs up to the first step where the two
 * references disagree; every step before must match.
 */
export function registerDifferential(h: Harness): void {
  const differential = (name: string, kind: PolicyKind | undefined, skew = false) =>
    h.test(`random traces equal the reference: ${name}`, async (run) => {
      let n = 0;
      const traceArb = fc.array(opArb(h.scale, skew), { minLength: 1, maxLength: 40 });
      const property = fc.asyncProperty(
        policiesArb(kind, h.scale),
        traceArb,
        fc.nat(100_000),
        async (policies, trace, start) => {
          const prefix = `${run.prefix}r${++n}`;
          run.advance(1_000_000 + start * h.scale);
          const limiter = run.limiter(policies, prefix);
          const kept = new Reference(false);
          const expiring = new Reference(true);
          const keysOf = (id: string) =>
            policies.map((p) => policyKey(prefix, encodeIdentity(id), p.id));
          for (let i = 0; i < trace.length; i++) {
            const { op, dt, who, cost: c } = trace[i]!;
            const id = IDENTITIES[who]!;
            const keys = keysOf(id);
            run.advance(dt);
            if (op === 'reset') {
              await limiter.reset(id);
              kept.reset(keys);
              expiring.reset(keys);
              continue;
            }
            const cost = fitCost(c, policies);
            const call = { keys, policies, cost, mode: op } as const;
            const expected = kept.decide(policies, call, run.now);
            const alternative = expiring.decide(policies, call, run.now);
            const what = `step ${i}: ${op} ${JSON.stringify(id)} cost ${cost} at ${dt >= 0 ? '+' : ''}${dt} ms`;
            if (!skew) {
              h.expect(alternative, `${what}: expired = kept (reference)`).toEqual(expected);
            } else if (JSON.stringify(alternative) !== JSON.stringify(expected)) {
              break;
            }
            const actual =
              op === 'peek' ? await limiter.peek(id) : await limiter.limit(id, { cost });
            h.expect(actual, what).toEqual(expected);
            if (op === 'limit' && actual.allowed) {
              await expectTtls(h, run, limiter, id, actual, prefix);
            }
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
      );
      await fc.assert(property, { numRuns: h.numRuns });
    });

  h.api.describe(
    'differential: random traces, field for field against the TypeScript reference',
    () => {
      for (const kind of POLICY_KINDS) differential(kind, kind);
      differential('1–3 policies of any kind', undefined);
      // Beyond monotone time: callers whose clocks run behind the key's last writer.
      differential('callers with skewed clocks, 1–3 policies', undefined, true);
    },
  );
}
