import {
  fixedWindow,
  leakyBucket,
  type Policy,
  type PolicyKind,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { POLICY_KINDS } from '@floodgate/core/store';
import fc from 'fast-check';

const count = (max: number) => fc.integer({ min: 1, max });

/** Short windows (× scale), so traces of a few dozen steps cross many of them; some odd. */
const duration = (scale: number) =>
  fc
    .oneof(fc.integer({ min: 1, max: 40 }), fc.constantFrom(7, 60, 100, 250, 1000))
    .map((ms) => ms * scale);

// The one list of kinds, from core: a new kind is tested as soon as it exists.
export { POLICY_KINDS };

/** Zones for random quotas: daylight saving of an hour and of 30 minutes, a +5:45 offset. */
const QUOTA_ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
] as const;

/** Production-sized parameters: large counts and real windows, where float slips would show. */
const LARGE_WINDOWS = fc.constantFrom(999, 60_000, 3_600_000, 86_400_000, 604_800_000);

/** What a policy may carry besides its parameters: `shadow` and `blockFor`. */
interface Controls {
  readonly shadow?: boolean;
  readonly blockFor?: number;
}

function byKind(
  kind: PolicyKind,
  scale: number,
  large: boolean,
  controls: Controls = {},
): fc.Arbitrary<Policy> {
  // As strings of ms: a bare number under 1000 would warn SHORT_INTERVAL (it means ms, as here).
  const d = (large ? LARGE_WINDOWS : duration(scale)).map((ms): `${number}ms` => `${ms}ms`);
  // A log keeps one entry per unit (a sorted-set member in Redis): keep it to hundreds.
  const limit = large ? count(kind === 'slidingWindowLog' ? 300 : 1_000_000) : count(6);
  const extra = large ? count(1_000_000) : count(8);
  switch (kind) {
    case 'fixedWindow':
      return fc.record({ limit, window: d }).map((o) => fixedWindow({ ...o, ...controls }));
    case 'slidingWindow':
      return fc.record({ limit, window: d }).map((o) => slidingWindow({ ...o, ...controls }));
    case 'slidingWindowLog':
      return fc.record({ limit, window: d }).map((o) => slidingWindowLog({ ...o, ...controls }));
    case 'tokenBucket':
      return fc
        .record({ limit, interval: d, burst: fc.option(extra, { nil: undefined }) })
        .map((o) => tokenBucket({ ...o, ...controls }));
    case 'leakyBucket':
      return fc
        .record({ limit, interval: d, queue: large ? count(100_000) : count(5) })
        .map((o) => leakyBucket({ ...o, ...controls }));
    case 'quota':
      // Calendar periods do not scale: traces cross a local midnight when they start near one
      // (the suite starts at a UTC midnight) or step days (large); conformance/quota.ts plays
      // the seams on purpose.
      return fc
        .record({
          limit,
          per: fc.constantFrom('day' as const, 'week' as const, 'month' as const),
          timeZone: fc.constantFrom(...QUOTA_ZONES),
        })
        .map((o) => quota({ ...o, ...controls }));
  }
}

/**
 * 1–3 policies of any kind (or exactly one of `kind`), with distinct ids as createLimiter
 * requires. `scale` stretches every duration (see `realTimeExpiry`).
 */
export function policiesArb(
  kind: PolicyKind | undefined,
  scale: number,
  minLength = 1,
  large = false,
): fc.Arbitrary<Policy[]> {
  if (kind !== undefined) return byKind(kind, scale, large).map((p) => [p]);
  const any = fc.oneof(...POLICY_KINDS.map((k) => byKind(k, scale, large)));
  return fc.uniqueArray(any, { minLength, maxLength: 3, selector: (p) => p.id });
}

/** A policy rebuilt by its own factory with another limit and burst (queue): the same id. */
function relimit(p: Policy, limit: number, extra: number | undefined, name?: string): Policy {
  const same = { ...(name === undefined ? {} : { name }), ...controlsOf(p) };
  switch (p.kind) {
    case 'fixedWindow':
      return fixedWindow({ limit, window: p.windowMs, ...same });
    case 'slidingWindow':
      return slidingWindow({ limit, window: p.windowMs, ...same });
    case 'slidingWindowLog':
      return slidingWindowLog({ limit, window: p.windowMs, ...same });
    case 'tokenBucket':
      return tokenBucket({ limit, interval: p.windowMs, burst: extra, ...same });
    case 'leakyBucket':
      return leakyBucket({ limit, interval: p.windowMs, queue: extra ?? 1, ...same });
    case 'quota':
      return quota({ limit, ...p.calendar!, ...same });
  }
}

/** The burst (a token bucket's capacity) or queue (a leaky bucket's, less the one leaving). */
const extraOf = (p: Policy): number | undefined =>
  p.kind === 'leakyBucket' ? p.capacity - 1 : p.kind === 'tokenBucket' ? p.capacity : undefined;

const controlsOf = (p: Policy): Controls => ({
  ...(p.shadow === true ? { shadow: true } : {}),
  ...(p.blockForMs === undefined ? {} : { blockFor: p.blockForMs }),
});

/**
 * 1–3 policies (of any kind, or one of `kind`), each in 2–3 versions built by its own factory with
 * the same window (interval, period and zone), name and `blockFor`, and other limits, bursts or
 * queues: `versions[v]` is the limiter's policy list in version v. The versions of a policy share
 * its id, so its count: the traces that switch between them check every store against the
 * reference when a limit is raised or lowered, within a window and across its seams.
 */
export function relimitedPoliciesArb(
  kind: PolicyKind | undefined,
  scale: number,
  large = false,
): fc.Arbitrary<Policy[][]> {
  const limit = large ? count(1_000_000) : count(8);
  const extra = (k: PolicyKind) =>
    k === 'leakyBucket'
      ? large
        ? count(100_000)
        : count(6)
      : fc.option(large ? count(1_000_000) : count(10), { nil: undefined });
  const one = (k: PolicyKind) =>
    fc
      .tuple(
        fc.oneof(
          { arbitrary: fc.constant(undefined), weight: 3 },
          { arbitrary: duration(scale), weight: 1 },
        ),
        fc.option(fc.constantFrom('api', 'plan'), { nil: undefined }),
      )
      .chain(([blockFor, name]) =>
        fc
          .tuple(
            byKind(k, scale, large, blockFor === undefined ? {} : { blockFor }),
            fc.array(fc.tuple(limit, extra(k)), { minLength: 1, maxLength: 2 }),
          )
          .map(([base, more]) => {
            const first = relimit(base, base.limit, extraOf(base), name);
            // A log keeps one entry per request: its limits stay in the hundreds.
            const cap = (l: number) => (k === 'slidingWindowLog' ? Math.min(l, 300) : l);
            return [first, ...more.map(([l, e]) => relimit(first, cap(l), e, name))];
          }),
      );
  const family =
    kind !== undefined ? one(kind) : fc.constantFrom(...POLICY_KINDS).chain((k) => one(k));
  return fc
    .uniqueArray(family, {
      minLength: 1,
      maxLength: kind === undefined ? 3 : 1,
      selector: (versions) => versions[0]!.id,
    })
    .map((families) => {
      // Version v of the limiter: each policy's version v, or its last when it has fewer.
      const n = Math.max(...families.map((f) => f.length));
      return Array.from({ length: n }, (_, v) =>
        families.map((f) => f[Math.min(v, f.length - 1)]!),
      );
    });
}

/**
 * 2–3 policies of any kind, at least one shadowed and one enforced (`shadow`), some with
 * `blockFor`: the mixes whose enforced policies must decide as if the shadowed were absent.
 */
export function mixedPoliciesArb(scale: number): fc.Arbitrary<Policy[]> {
  const one = fc
    .tuple(
      fc.constantFrom(...POLICY_KINDS),
      fc.boolean(),
      fc.option(duration(scale), { nil: undefined, freq: 3 }),
    )
    .chain(([kind, shadow, blockFor]) => byKind(kind, scale, false, { shadow, blockFor }));
  return fc
    .uniqueArray(one, { minLength: 2, maxLength: 3, selector: (p) => p.id })
    .filter((ps) => ps.some((p) => p.shadow === true) && ps.some((p) => p.shadow !== true));
}

/** Time steps (× scale): mostly small, sometimes across several windows. */
export function stepArb(scale: number): fc.Arbitrary<number> {
  return fc
    .oneof(
      { arbitrary: fc.constant(0), weight: 3 },
      { arbitrary: fc.integer({ min: 1, max: 3 }), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 60 }), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 2500 }), weight: 1 },
    )
    .map((ms) => ms * scale);
}

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

/** A cost anywhere up to 2 000 000, for production-sized policies. */
const largeCostArb = fc.oneof(costArb, fc.integer({ min: 1, max: 2_000_000 }));

/**
 * With `skew`, some steps go back in time: a caller whose clock is behind the key's writer.
 * With `large`, costs and steps fit production-sized policies (steps up to days).
 */
export function opArb(scale: number, skew = false, large = false): fc.Arbitrary<Op> {
  const back = fc.integer({ min: -80, max: -1 }).map((ms) => ms * scale);
  const step = large
    ? fc.oneof(stepArb(scale), fc.integer({ min: 0, max: 200_000_000 }))
    : stepArb(scale);
  const dt = skew ? fc.oneof({ arbitrary: step, weight: 3 }, { arbitrary: back, weight: 1 }) : step;
  return fc.record({
    op: fc.oneof(
      { arbitrary: fc.constant<'limit'>('limit'), weight: 8 },
      { arbitrary: fc.constant<'peek'>('peek'), weight: 2 },
      { arbitrary: fc.constant<'reset'>('reset'), weight: 1 },
    ),
    dt,
    who: fc.integer({ min: 0, max: 1 }),
    cost: large ? largeCostArb : costArb,
  });
}
