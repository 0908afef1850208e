// A leakyBucket under `wait({ maxWaitMs })`. The bucket admits a request with a turn (`delayMs`)
// as far ahead as its queue reaches: admitted, the slot is charged, and the waiter would sleep
// past its maxWaitMs. So the waiter's call is evaluated with each enforced leaky bucket's queue
// cut to what the time left can hold: the same policy (same id, so the same key and state, and
// the same rate), a smaller capacity, sent per call like every parameter. A turn within the time
// left is admitted exactly as the whole queue would admit it; a later one is denied, charging
// nothing, and its denial says when the turn comes. No store protocol change: every store reads
// a call's parameters from `call.policies`.
import { ceilDiv, floorDiv } from './policies/common.js';
import type { Decision, Policy } from './types.js';

/** An enforced leaky bucket of the limiter: where it is, and its parameters (define.ts). */
interface Shaper {
  readonly policy: Policy;
  /** Its place among `Decision.policies` (the enforced policies, in order). */
  readonly part: number;
  readonly capacity: number;
  readonly perUnit: number;
  readonly perMs: number;
  /** ceil(capacity × perUnit / perMs): a wait this long holds the whole queue. */
  readonly wholeMs: number;
}

/** One call's cut: the policies to evaluate, and each cut bucket's capacity (for `turnMs`). */
export interface Cut {
  readonly policies: readonly Policy[];
  readonly capacities: ReadonlyMap<Shaper, number>;
}

/** The limiter's enforced leaky buckets, and how a waiter's time left cuts their queues. */
export class Turns {
  readonly #policies: readonly Policy[];
  readonly #shapers: readonly Shaper[];

  constructor(policies: readonly Policy[]) {
    this.#policies = policies;
    const shapers: Shaper[] = [];
    let part = 0;
    for (const p of policies) {
      // Shadowed policies are left out of `Decision.policies` and shape nothing.
      if (p.shadow === true) continue;
      // A cut bucket that denies would set its block (`blockFor`) where the whole queue admits:
      // a penalty for the caller's impatience. Those buckets are not cut; an admission past the
      // time left is given back instead (wait.ts).
      if (p.kind === 'leakyBucket' && p.blockForMs === undefined) {
        const [capacity, perUnit, perMs] = p.params;
        const wholeMs = ceilDiv(capacity * perUnit, perMs);
        shapers.push({ policy: p, part, capacity, perUnit, perMs, wholeMs });
      }
      part++;
    }
    this.#shapers = shapers;
  }

  /**
   * The policies with each enforced leaky bucket's queue cut so that no admission of `cost` waits
   * more than `leftMs` (whole ms ≥ 0): admitted, a bucket's turn is `ahead / perMs` away, where
   * `ahead ≤ (capacity − cost) × perUnit` ticks; a capacity of `cost + ⌊leftMs × perMs / perUnit⌋`
   * keeps it at most `leftMs`. Undefined when no queue needs cutting.
   */
  cut(cost: number, leftMs: number): Cut | undefined {
    let policies: Policy[] | undefined;
    let capacities: Map<Shaper, number> | undefined;
    for (const s of this.#shapers) {
      // Past wholeMs the product below could pass 2^53; the whole queue fits anyway.
      if (leftMs >= s.wholeMs) continue;
      const capacity = cost + floorDiv(leftMs * s.perMs, s.perUnit);
      if (capacity >= s.capacity) continue;
      policies ??= this.#policies.slice();
      capacities ??= new Map();
      capacities.set(s, capacity);
      const i = policies.indexOf(s.policy);
      policies[i] = Object.freeze({
        ...s.policy,
        capacity,
        // The fourth parameter stays: the script reads as many as the kind has (protocol.ts).
        params: Object.freeze([capacity, s.perUnit, s.perMs, s.policy.params[3] ?? 0] as const),
      });
    }
    if (policies === undefined || capacities === undefined) return undefined;
    return { policies: Object.freeze(policies), capacities };
  }

  /**
   * From a denial of a cut call: the ms from the evaluation until the earliest turn a cut bucket
   * can give this request, whatever anyone waits (its queue moves at its own rate; only a refund
   * or a reset brings it closer). 0 when no cut bucket denied. Within 1 ms of the true turn,
   * either way: its denial's wait is rounded up to the ms, the cut queue's length down.
   */
  turnMs(cut: Cut, decision: Decision, cost: number): number {
    let turn = 0;
    for (const [s, capacity] of cut.capacities) {
      const part = decision.policies[s.part];
      // Not the bucket's part (a decision shaped otherwise): no estimate, the retries decide.
      if (part === undefined || part.kind !== 'leakyBucket' || part.name !== s.policy.name) {
        continue;
      }
      if (part.allowed) continue;
      const queued = floorDiv((capacity - cost) * s.perUnit, s.perMs);
      turn = Math.max(turn, part.retryAfterMs + queued);
    }
    return turn;
  }
}
