// Random traces with overrides set, replaced and cleared between decisions, every answer compared
// with a limiter on the reference store (core's `evaluateAll` over a Map): the store under test
// (MemoryStore, the Lua on every Redis client) must decide exactly as the reference does.
import {
  createLimiter,
  fixedWindow,
  isFloodgateError,
  type LimiterWithOverrides,
  leakyBucket,
  type Policy,
  type PolicyKind,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import {
  evaluateAll,
  type OverrideStore,
  POLICY_KINDS,
  type PolicyState,
  type Store,
  type StoreCall,
} from '@floodgate/core/store';
import fc from 'fast-check';
import type { Harness } from './harness.js';

const HOUR = 3_600_000;
/** Between traces: a day on, so each starts on fresh windows of its own prefix. */
const DAY_STEP = 24 * HOUR;

/** `evaluateAll` over a Map on the suite's clock, overrides beside: the reference store. */
class ReferenceStore implements Store, OverrideStore {
  readonly #states = new Map<string, { state: PolicyState; until: number }>();
  constructor(readonly now: () => number) {}

  #read(key: string, now: number): PolicyState | undefined {
    const e = this.#states.get(key);
    return e !== undefined && e.until > now ? e.state : undefined;
  }

  async evaluate(call: StoreCall) {
    const now = this.now();
    const states = call.keys.map((k) => this.#read(k, now));
    const { results, writes } = evaluateAll(call, states, now);
    writes.forEach((w, i) => {
      if (w === null) this.#states.delete(call.keys[i]!);
      else if (w !== undefined)
        this.#states.set(call.keys[i]!, { state: w.state, until: now + w.ttlMs });
    });
    return results;
  }

  async reset(keys: readonly string[]) {
    for (const k of keys) this.#states.delete(k);
  }

  async writeOverrides(keys: readonly string[], states: readonly (PolicyState | null)[]) {
    keys.forEach((k, i) => {
      const s = states[i];
      if (s === null || s === undefined) this.#states.delete(k);
      else this.#states.set(k, { state: s.slice(), until: s[0]! });
    });
  }

  async readOverrides(keys: readonly string[]) {
    const now = this.now();
    return keys.map((k) => this.#read(k, now));
  }
}

const count = (max: number) => fc.integer({ min: 1, max });
// Hours, and steps in whole seconds: every TTL a store writes is then at least a second, so a
// store whose TTLs run on real time (Redis on the client clock) keeps every key the trace reads.
const span = fc.constantFrom(HOUR, 2 * HOUR, 24 * HOUR);

// One entry per kind: the type refuses a kind without one, so a new kind is traced at once.
const BY_KIND: { readonly [K in PolicyKind]: (name: string) => fc.Arbitrary<Policy> } = {
  fixedWindow: (name) =>
    fc.record({ limit: count(6), window: span }).map((o) => fixedWindow({ ...o, name })),
  slidingWindow: (name) =>
    fc.record({ limit: count(6), window: span }).map((o) => slidingWindow({ ...o, name })),
  slidingWindowLog: (name) =>
    fc.record({ limit: count(6), window: span }).map((o) => slidingWindowLog({ ...o, name })),
  tokenBucket: (name) =>
    fc
      .record({ limit: count(6), interval: span, burst: fc.option(count(8), { nil: undefined }) })
      .map((o) => tokenBucket({ ...o, name })),
  leakyBucket: (name) =>
    fc
      .record({ limit: count(6), interval: span, queue: count(5) })
      .map((o) => leakyBucket({ ...o, name })),
  quota: (name) => count(6).map((limit) => quota({ limit, per: 'day', name })),
};

const policiesArb = fc
  .array(fc.constantFrom(...POLICY_KINDS), { minLength: 1, maxLength: 3 })
  .chain((kinds) => fc.tuple(...kinds.map((k, i) => BY_KIND[k](`p${i}`))));

interface Op {
  readonly op: 'limit' | 'peek' | 'override' | 'clear';
  /** Seconds to move the clock first. */
  readonly dt: number;
  readonly cost: number;
  /** Per policy: its override's limit, or -1 to leave it out (0 blocks). */
  readonly limits: readonly number[];
  /** Seconds from now to the override's end. */
  readonly until: number;
}

const opArb: fc.Arbitrary<Op> = fc.record({
  op: fc.constantFrom('limit', 'limit', 'limit', 'peek', 'override', 'clear'),
  dt: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 7200 })),
  cost: count(4),
  limits: fc.array(fc.integer({ min: -1, max: 8 }), { minLength: 3, maxLength: 3 }),
  until: fc.oneof(fc.integer({ min: 1, max: 120 }), fc.integer({ min: 1, max: 3 * 3600 })),
});

/** What a call answered: the decision, or the error's code, as comparable text. */
async function outcome(fn: () => Promise<unknown>): Promise<string> {
  try {
    return JSON.stringify((await fn()) ?? null);
  } catch (error) {
    if (isFloodgateError(error)) return `error ${error.code}`;
    throw error;
  }
}

/** Registered on stores that run on the suite's clock (`controlsTime`). */
export function registerOverrideTraces(h: Harness): void {
  h.test('random traces with overrides equal the reference', async (run) => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        policiesArb,
        fc.array(opArb, { minLength: 1, maxLength: 30 }),
        async (policies, trace) => {
          const prefix = `${run.prefix}v${++n}`;
          run.advance(DAY_STEP);
          // No timeout, as the suite's other limiters (through `run.spy`, which is not
          // `remote`): on the store itself a remote store's default of 250 ms applied, and on a
          // loaded machine a call answered after it was a STORE_TIMEOUT the reference never gives.
          const make = (store: Store): LimiterWithOverrides =>
            createLimiter({
              store,
              policy: policies,
              prefix,
              blockCache: false,
              onStoreError: 'throw',
              overrides: true,
              timeoutMs: false,
            });
          const actual = make(run.store);
          const reference = make(new ReferenceStore(() => run.now));
          const capacity = Math.min(...policies.map((p) => p.capacity));
          for (let i = 0; i < trace.length; i++) {
            const { op, dt, cost, limits, until } = trace[i]!;
            run.advance(dt * 1000);
            const named = policies.flatMap((p, j) =>
              limits[j]! >= 0 ? [[p.name, limits[j]!] as const] : [],
            );
            const limit =
              named.length === 0 ? { [policies[0]!.name]: 1 } : Object.fromEntries(named);
            const call = (l: LimiterWithOverrides) => {
              if (op === 'limit') return l.limit('i', { cost: 1 + ((cost - 1) % capacity) });
              if (op === 'peek') return l.peek('i');
              if (op === 'clear') return l.overrides.clear('i');
              return l.override('i', { limit, until: run.now + until * 1000 });
            };
            const got = await outcome(() => call(actual));
            const want = await outcome(() => call(reference));
            h.expect(got, `step ${i} (${op}) of ${JSON.stringify(trace.slice(0, i + 1))}`).toBe(
              want,
            );
            const stored = await outcome(() => actual.overrides.get('i'));
            h.expect(stored, `override after step ${i}`).toBe(
              await outcome(() => reference.overrides.get('i')),
            );
          }
        },
      ),
      { numRuns: h.numRuns },
    );
  });
}
