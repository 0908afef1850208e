// The limiter decides through MemoryStore.evaluateSync (no promise per store call); the
// conformance suite goes through a wrapper, hence `evaluate`. This runs random traces on the
// synchronous path against the reference composition (evaluateAll over a plain Map).
import {
  createLimiter,
  fixedWindow,
  leakyBucket,
  type Policy,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import {
  evaluateAll,
  type PolicyResult,
  type PolicyState,
  type Store,
  type StoreCall,
} from '@floodgate/core/store';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

class ReferenceStore implements Store {
  readonly states = new Map<string, PolicyState>();
  constructor(readonly clock: () => number) {}
  evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    const { results, writes } = evaluateAll(
      call,
      call.keys.map((k) => this.states.get(k)),
      this.clock(),
    );
    writes.forEach((w, i) => {
      if (w === null) this.states.delete(call.keys[i]!);
      else if (w !== undefined) this.states.set(call.keys[i]!, w.state);
    });
    return Promise.resolve(results);
  }
  reset(keys: readonly string[]): Promise<void> {
    for (const k of keys) this.states.delete(k);
    return Promise.resolve();
  }
}

const policyArb: fc.Arbitrary<Policy> = fc
  .tuple(
    fc.integer({ min: 0, max: 4 }),
    fc.integer({ min: 1, max: 6 }),
    fc.integer({ min: 1, max: 50 }),
  )
  .map(([k, limit, w]) =>
    [
      () => fixedWindow({ limit, window: w }),
      () => slidingWindow({ limit, window: w }),
      () => slidingWindowLog({ limit, window: w }),
      () => tokenBucket({ limit, interval: w, burst: limit + 1 }),
      () => leakyBucket({ limit, interval: w, queue: limit }),
    ][k]!(),
  );

it('random traces through the limiter equal the reference, field for field', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(policyArb, { minLength: 1, maxLength: 3, selector: (p) => p.id }),
      fc.array(
        fc.record({
          dt: fc.integer({ min: 0, max: 30 }),
          who: fc.integer({ min: 0, max: 2 }),
          op: fc.constantFrom('limit', 'limit', 'limit', 'peek', 'reset'),
          cost: fc.integer({ min: 1, max: 3 }),
        }),
        { maxLength: 60 },
      ),
      async (policies, trace) => {
        const clock = { t: 1_700_000_000_000 };
        const now = () => clock.t;
        const fast = createLimiter({ store: new MemoryStore({ now }), policy: policies });
        const ref = createLimiter({ store: new ReferenceStore(now), policy: policies });
        const capacity = Math.min(...policies.map((p) => p.capacity));
        for (const { dt, who, op, cost } of trace) {
          clock.t += dt;
          const id = `id-${who}`;
          if (op === 'reset') {
            await Promise.all([fast.reset(id), ref.reset(id)]);
          } else if (op === 'peek') {
            expect(await fast.peek(id)).toEqual(await ref.peek(id));
          } else {
            const c = Math.min(cost, capacity);
            expect(await fast.limit(id, { cost: c })).toEqual(await ref.limit(id, { cost: c }));
          }
        }
      },
    ),
    { numRuns: 150 },
  );
});
