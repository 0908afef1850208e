import type { Policy, PolicyKind } from '@floodgate/core';
import {
  blockKey,
  encodeIdentity,
  evaluateAll,
  type PolicyState,
  policyKey,
  type StoreCall,
  toDecision,
} from '@floodgate/core/store';
import fc from 'fast-check';
import {
  fitCost,
  mixedPoliciesArb,
  type Op,
  opArb,
  POLICY_KINDS,
  policiesArb,
  relimitedPoliciesArb,
} from './arbitraries.js';
import { expectTtls, type Harness } from './harness.js';

const IDENTITIES = ['a', '{a}:'] as const;

interface Entry {
  state: PolicyState;
  /** Suite time of the write. */
  at: number;
  ttl: number;
  /** Real time just before the call that wrote it: the earliest its real-time TTL can start. */
  real: number;
}

/**
 * The reference store: `evaluateAll` over a plain Map. `expiring` drops a key when read more
 * than its TTL after it was written (as MemoryStore does, on the clock of the read); otherwise
 * states are kept forever.
 */
export class Reference {
  readonly entries = new Map<string, Entry>();
  constructor(readonly expiring: boolean) {}

  /** What the call decides, with the keys in `drop` taken as gone; `apply` commits it. */
  evaluate(policies: readonly Policy[], call: StoreCall, now: number, drop: ReadonlySet<string>) {
    const states = call.keys.map((k) => {
      const e = this.entries.get(k);
      if (e === undefined || drop.has(k) || (this.expiring && now - e.at > e.ttl)) return undefined;
      return e.state;
    });
    const { results, writes } = evaluateAll(call, states, now);
    const decision = toDecision(policies, results);
    const apply = (real: number) => {
      call.keys.forEach((k, j) => {
        if (states[j] === undefined) this.entries.delete(k);
        const w = writes[j];
        if (w === null) this.entries.delete(k);
        else if (w !== undefined)
          this.entries.set(k, { state: w.state, at: now, ttl: w.ttlMs, real });
      });
    };
    return { decision, apply };
  }

  reset(keys: readonly string[]): void {
    for (const k of keys) this.entries.delete(k);
  }

  /** Could a store whose TTLs run on real time have dropped this key by `realNow` (± 2 ms)? */
  mayHaveExpired(key: string, realNow: number): boolean {
    const e = this.entries.get(key);
    return e !== undefined && realNow - e.real + 2 >= e.ttl;
  }
}

/** Every subset of `items`, the empty one first. */
function subsets<T>(items: readonly T[]): T[][] {
  const out: T[][] = [[]];
  for (const x of items) {
    const n = out.length;
    for (let i = 0; i < n; i++) out.push([...out[i]!, x]);
  }
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * The keys the reference takes as gone to agree with `actual`: none, unless the store's TTLs
 * run on real time and may have lost a key whose TTL ran out while the suite's clock stood
 * still; then either answer is right, and the reference follows the one the store gave.
 */
export function droppedFor(
  h: Harness,
  kept: Reference,
  policies: readonly Policy[],
  call: StoreCall,
  now: number,
  actual: unknown,
): Set<string> {
  const risky = h.realTimeExpiry ? call.keys.filter((k) => kept.mayHaveExpired(k, Date.now())) : [];
  for (const dropped of subsets(risky)) {
    const drop = new Set(dropped);
    if (same(actual, kept.evaluate(policies, call, now, drop).decision)) return drop;
  }
  return new Set();
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
 *
 * With `relimit`, each policy comes in versions built by its own factory with the same window
 * (interval, period), name and `blockFor` and other limits, bursts or queues, and every step is
 * made by the limiter of a random version: one key, its state written under one limit and read
 * under another (docs/algorithms.md, "Keys, and a limit that changes").
 */
export function registerDifferential(h: Harness): void {
  const differential = differentialTest(h);
  h.api.describe(
    'differential: random traces, field for field against the TypeScript reference',
    () => {
      for (const kind of POLICY_KINDS) differential(kind, kind);
      differential('1–3 policies of any kind', undefined);
      // Beyond monotone time: callers whose clocks run behind the key's last writer.
      differential('callers with skewed clocks, 1–3 policies', undefined, true);
      // Production-sized limits, windows up to a week and costs up to millions.
      differential('large limits, windows and costs, 1–3 policies', undefined, false, true);
      // Shadowed policies beside enforced ones, with penalties: charged apart (compose.ts).
      differential(
        'shadowed beside enforced policies, with blockFor',
        undefined,
        false,
        false,
        true,
      );
      limitChanges(differential);
    },
  );
}

/**
 * The differential traces whose policies' limits change between calls (`registerDifferential`
 * runs them too), alone: for a store whose full suite runs elsewhere, such as a Redis store on a
 * Redis Cluster (redis-suite/cluster.ts).
 */
export function registerLimitChanges(h: Harness): void {
  h.api.describe('differential: limits that change between calls, against the reference', () =>
    limitChanges(differentialTest(h)),
  );
}

type Differential = ReturnType<typeof differentialTest>;

/** A limit (burst, queue) that changes between calls: the same keys, read under another limit. */
function limitChanges(differential: Differential): void {
  for (const kind of POLICY_KINDS) {
    differential(`${kind} whose limit changes between calls`, kind, false, false, false, true);
  }
  differential(
    'limits that change between calls, 1–3 policies, callers with skewed clocks',
    undefined,
    true,
    false,
    false,
    true,
  );
  differential(
    'large limits that change between calls, 1–3 policies',
    undefined,
    false,
    true,
    false,
    true,
  );
}

/** The test of one kind of random trace (see `registerDifferential`). */
function differentialTest(h: Harness) {
  return (
    name: string,
    kind: PolicyKind | undefined,
    skew = false,
    large = false,
    mixed = false,
    relimit = false,
  ) =>
    h.test(`random traces equal the reference: ${name}`, async (run) => {
      let n = 0;
      // With versions, each step also picks the version whose limiter makes it.
      const stepArb: fc.Arbitrary<[Op, number]> = relimit
        ? fc.tuple(opArb(h.scale, skew, large), fc.nat())
        : opArb(h.scale, skew, large).map((op): [Op, number] => [op, 0]);
      const traceArb = fc.array(stepArb, { minLength: 1, maxLength: relimit ? 60 : 40 });
      const versionsArb: fc.Arbitrary<Policy[][]> = relimit
        ? relimitedPoliciesArb(kind, h.scale, large)
        : (mixed ? mixedPoliciesArb(h.scale) : policiesArb(kind, h.scale, 1, large)).map((p) => [
            p,
          ]);
      const property = fc.asyncProperty(
        versionsArb,
        traceArb,
        fc.nat(100_000),
        async (versions, trace, start) => {
          const prefix = `${run.prefix}r${++n}`;
          run.advance(1_000_000 + start * h.scale);
          // One limiter per version, on one store and prefix: the versions share their keys.
          const limiters = versions.map((v) => run.limiter(v, prefix));
          const layout = versions[0]!;
          const kept = new Reference(false);
          const expiring = new Reference(true);
          // One key per policy, then a block key per blocking policy (as the limiter builds them).
          const keysOf = (id: string) => {
            const own = layout.map((p) => policyKey(prefix, encodeIdentity(id), p.id));
            const blocks = layout.flatMap((p, i) =>
              p.blockForMs === undefined ? [] : [blockKey(own[i]!)],
            );
            return [...own, ...blocks];
          };
          for (let i = 0; i < trace.length; i++) {
            const [{ op, dt, who, cost: c }, pick] = trace[i]!;
            const version = pick % versions.length;
            const policies = versions[version]!;
            const limiter = limiters[version]!;
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
            const limits =
              versions.length > 1
                ? ` limits ${policies.map((p) => p.params.join('/')).join(', ')}`
                : '';
            const what = `step ${i}: ${op} ${JSON.stringify(id)} cost ${cost} at ${dt >= 0 ? '+' : ''}${dt} ms${limits}`;
            const none = new Set<string>();
            const expected = kept.evaluate(policies, call, run.now, none).decision;
            const alternative = expiring.evaluate(policies, call, run.now, none).decision;
            if (!skew) {
              h.expect(alternative, `${what}: expired = kept (reference)`).toEqual(expected);
            } else if (!same(alternative, expected)) {
              break;
            }
            const before = Date.now();
            const actual =
              op === 'peek' ? await limiter.peek(id) : await limiter.limit(id, { cost });
            const chosen = droppedFor(h, kept, policies, call, run.now, actual);
            h.expect(actual, what).toEqual(kept.evaluate(policies, call, run.now, chosen).decision);
            kept.evaluate(policies, call, run.now, chosen).apply(before);
            expiring.evaluate(policies, call, run.now, chosen).apply(before);
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
}
