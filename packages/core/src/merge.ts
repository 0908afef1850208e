import { bindsInstead, combined } from './binding.js';
import { FloodgateError } from './errors.js';
import type { Decision, DecisionReason, PolicyDecision } from './types.js';

/**
 * Several limiters' decisions on one request (stacked limiters: a per-key and a per-IP one, an
 * app-wide and a route's own) as one decision, reported together. The rule:
 * - `policies`: every decision's policies, in order;
 * - `allowed` when every decision allowed; `retryAfterMs` is then 0, otherwise the longest
 *   `retryAfterMs` of the denials; `delayMs` the longest when allowed, otherwise 0;
 * - `resetAfterMs`: the longest;
 * - `binding` is chosen over all those policies by the rule on `Decision.binding`, as if one
 *   limiter held them all (usually the binding of the decision with the fewest units left), and
 *   `limit` / `remaining` are its numbers;
 * - `reason`: the first decision's that has one;
 * - `override`: when any decision has one, the earliest `until` among them.
 *
 * Merging is associative: merging a merge with more decisions gives the merge of them all. One
 * decision is returned as it is.
 * @example
 * One answer for a per-key and a per-IP limiter.
 * ```ts
 * import { type Limiter, mergeDecisions } from '@floodgate/core';
 *
 * declare const perKey: Limiter;
 * declare const perIp: Limiter;
 * const decision = mergeDecisions([await perKey.limit('k_123'), await perIp.limit('192.0.2.7')]);
 * if (!decision.allowed) console.log(`${decision.binding.name}: retry in ${decision.retryAfterMs} ms`);
 * ```
 * @public
 */
export function mergeDecisions(decisions: readonly Decision[]): Decision {
  const first = decisions[0];
  if (first === undefined) {
    throw new FloodgateError('INVALID_OPTION', 'mergeDecisions needs at least one decision');
  }
  if (decisions.length === 1) return first;
  let allowed = true;
  let binding = first.binding;
  let resetAfterMs = 0;
  let retryAfterMs = 0;
  let delayMs = 0;
  let reason: DecisionReason | undefined;
  let until = Number.POSITIVE_INFINITY;
  const policies: PolicyDecision[] = [];
  for (const d of decisions) {
    if (!d.allowed) {
      allowed = false;
      retryAfterMs = Math.max(retryAfterMs, d.retryAfterMs);
    }
    resetAfterMs = Math.max(resetAfterMs, d.resetAfterMs);
    delayMs = Math.max(delayMs, d.delayMs);
    reason ??= d.reason;
    if (d.override !== undefined) until = Math.min(until, d.override.until);
    for (const p of d.policies) {
      // Over every policy, not each decision's binding: on a tie, a later decision's policy of
      // the same quota that comes back later binds, as it would in one limiter.
      if (bindsInstead(p, binding)) binding = p;
      policies.push(p);
    }
  }
  const merged = combined(allowed, binding, resetAfterMs, retryAfterMs, delayMs, policies);
  const withReason = reason === undefined ? merged : { ...merged, reason };
  // As one limiter would say it: the earliest end of the overrides that took part.
  return until === Number.POSITIVE_INFINITY ? withReason : { ...withReason, override: { until } };
}
