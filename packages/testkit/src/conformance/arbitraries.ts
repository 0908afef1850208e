import {
  fixedWindow,
  leakyBucket,
  type Policy,
  type PolicyKind,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import fc from 'fast-check';

const count = (max: number) => fc.integer({ min: 1, max });
/** Short windows, so random traces of a few dozen steps cross many of them; some odd, some strings. */
const duration = fc.oneof(
  fc.integer({ min: 1, max: 40 }),
  fc.constantFrom<number | '1s' | '250ms'>(7, 60, 100, 1000, '1s', '250ms'),
);

export const POLICY_KINDS: readonly PolicyKind[] = [
  'fixedWindow',
  'slidingWindow',
  'slidingWindowLog',
  'tokenBucket',
  'leakyBucket',
];

const BY_KIND: Record<PolicyKind, fc.Arbitrary<Policy>> = {
  fixedWindow: fc.record({ limit: count(6), window: duration }).map((o) => fixedWindow(o)),
  slidingWindow: fc.record({ limit: count(6), window: duration }).map((o) => slidingWindow(o)),
  slidingWindowLog: fc
    .record({ limit: count(6), window: duration })
    .map((o) => slidingWindowLog(o)),
  tokenBucket: fc
    .record({ limit: count(6), interval: duration, burst: fc.option(count(8), { nil: undefined }) })
    .map((o) => tokenBucket(o)),
  leakyBucket: fc
    .record({ limit: count(6), interval: duration, queue: count(5) })
    .map((o) => leakyBucket(o)),
};

/** One policy: of one kind, or of any. */
export function policyArb(kind?: PolicyKind): fc.Arbitrary<Policy> {
  return kind === undefined ? fc.oneof(...POLICY_KINDS.map((k) => BY_KIND[k])) : BY_KIND[kind];
}

/** 1–3 policies (or exactly one of `kind`), with distinct ids as createLimiter requires. */
export function policiesArb(kind?: PolicyKind, minLength = 1): fc.Arbitrary<Policy[]> {
  if (kind !== undefined) return BY_KIND[kind].map((p) => [p]);
  return fc.uniqueArray(policyArb(), { minLength, maxLength: 3, selector: (p) => p.id });
}

/** Time steps: mostly small, sometimes across several windows. */
export const stepArb = fc.oneof(
  { arbitrary: fc.constant(0), weight: 3 },
  { arbitrary: fc.integer({ min: 1, max: 3 }), weight: 3 },
  { arbitrary: fc.integer({ min: 0, max: 60 }), weight: 3 },
  { arbitrary: fc.integer({ min: 0, max: 2500 }), weight: 1 },
);

/** A cost of 1..8, brought into 1..capacity by the test. */
export const costArb = fc.oneof(
  { arbitrary: fc.constant(1), weight: 2 },
  { arbitrary: count(8), weight: 3 },
);

export function fitCost(cost: number, policies: readonly Policy[]): number {
  const capacity = Math.min(...policies.map((p) => p.capacity));
  return 1 + ((cost - 1) % capacity);
}

export interface Op {
  readonly op: 'limit' | 'peek' | 'reset';
  readonly dt: number;
  readonly who: number;
  readonly cost: number;
}

export const opArb: fc.Arbitrary<Op> = fc.record({
  op: fc.oneof(
    { arbitrary: fc.constant<'limit'>('limit'), weight: 8 },
    { arbitrary: fc.constant<'peek'>('peek'), weight: 2 },
    { arbitrary: fc.constant<'reset'>('reset'), weight: 1 },
  ),
  dt: stepArb,
  who: fc.integer({ min: 0, max: 1 }),
  cost: costArb,
});
