import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toDecision } from '../src/decision.js';
import { fixedWindow, mergeDecisions, tokenBucket } from '../src/index.js';
import type { PolicyResult } from '../src/store.js';
import type { Decision, Policy } from '../src/types.js';
import { bindingOf } from './headers-fixtures.js';

// Few distinct values, so ties of remaining, limit and reset are common.
const arbPolicy: fc.Arbitrary<Policy> = fc
  .tuple(fc.constantFrom(5, 10), fc.constantFrom(1000, 60_000), fc.boolean(), fc.nat(99))
  .map(([limit, ms, bucket, n]) =>
    bucket
      ? tokenBucket({ limit, interval: ms, name: `p${n}` })
      : fixedWindow({ limit, window: ms, name: `p${n}` }),
  );
const arbResult: fc.Arbitrary<PolicyResult> = fc
  .tuple(
    fc.boolean(),
    fc.nat(3),
    fc.constantFrom(0, 500, 1000, 60_000),
    fc.constantFrom(1, 700, 90_000),
    fc.constantFrom(0, 0, 200),
  )
  .map(([allowed, remaining, resetAfterMs, retry, delay]) => ({
    allowed,
    remaining,
    resetAfterMs,
    retryAfterMs: allowed ? 0 : retry,
    delayMs: allowed ? delay : 0,
  }));
/** One limiter's call: its policies and what the store answered. */
const arbCall = fc.array(fc.tuple(arbPolicy, arbResult), { minLength: 1, maxLength: 3 });
const arbCalls = fc.array(arbCall, { minLength: 1, maxLength: 4 });

const decide = (call: [Policy, PolicyResult][]): Decision =>
  toDecision(
    call.map(([p]) => p),
    call.map(([, r]) => r),
  );

/** Everything but object identity, with the binding as its position in `policies`. */
function shape(d: Decision) {
  const { binding, ...rest } = d;
  return { ...rest, binding: d.policies.indexOf(binding) };
}

describe('mergeDecisions, on random stacks of limiters', () => {
  it('equals one limiter holding every policy, binding by the documented rule', () => {
    fc.assert(
      fc.property(arbCalls, (calls) => {
        const merged = mergeDecisions(calls.map(decide));
        const together = decide(calls.flat());
        expect(shape(merged)).toEqual(shape(together));
        expect(merged.binding).toBe(bindingOf(merged.policies));
      }),
      { numRuns: 500 },
    );
  });

  it('is associative: merging merges gives the merge of all', () => {
    fc.assert(
      fc.property(arbCalls, fc.nat(), (calls, cut) => {
        const decisions = calls.map(decide);
        const k = 1 + (cut % decisions.length);
        const all = mergeDecisions(decisions);
        const nested = mergeDecisions(
          [decisions.slice(0, k), decisions.slice(k)]
            .filter((ds) => ds.length > 0)
            .map(mergeDecisions),
        );
        expect(shape(nested)).toEqual(shape(all));
        expect(nested.binding).toBe(all.binding);
      }),
      { numRuns: 300 },
    );
  });
});
