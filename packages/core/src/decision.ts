import { bindsInstead, combined } from './binding.js';
import { applyShadow, partlyShadowed, shadowMask } from './shadow.js';
import type { PolicyResult } from './store-types.js';
import type { Decision, DecisionReason, Policy, PolicyDecision } from './types.js';

function part(p: Policy, r: PolicyResult): PolicyDecision {
  return {
    name: p.name,
    kind: p.kind,
    limit: p.limit,
    windowMs: p.windowMs,
    allowed: r.allowed,
    remaining: r.remaining,
    resetAfterMs: r.resetAfterMs,
    retryAfterMs: r.retryAfterMs,
    delayMs: r.delayMs,
  };
}

// One policy, the common case: no loop, and the parts array is allocated at its final size (a
// push onto `[]` allocates a 16-slot backing store, more garbage than the decision itself).
function single(p: Policy, r: PolicyResult): Decision {
  return singleOf(part(p, r), r);
}

/** The decision of one policy's part (its `limit` the decision's), built in one go. */
export function singleOf(only: PolicyDecision, r: PolicyResult): Decision {
  const allowed = Boolean(r.allowed);
  return {
    allowed,
    limit: only.limit,
    remaining: r.remaining,
    resetAfterMs: Math.max(0, r.resetAfterMs),
    retryAfterMs: allowed ? 0 : Math.max(0, r.retryAfterMs),
    delayMs: allowed ? Math.max(0, r.delayMs) : 0,
    policies: [only],
    binding: only,
  };
}

/**
 * Combines per-policy results into the decision a caller sees, and names its binding policy
 * (the rule is on `Decision.binding`). Shadowed policies (`Policy.shadow`) are mapped as a
 * limiter with these policies maps them: beside enforced ones, they are reported in `shadowed`
 * and take no part in the rest; when every policy is shadowed, a denial becomes an admission
 * that says `shadowDenied`.
 * @example
 * What a limiter does with a store's answer (useful when calling a store directly, as tests do).
 * ```ts
 * import { type Store, type StoreCall, toDecision } from '@floodgate/core/store';
 *
 * declare const store: Store;
 * declare const call: StoreCall;
 * const decision = toDecision(call.policies, await store.evaluate(call));
 * ```
 * @public
 */
export function toDecision(
  policies: readonly Policy[],
  results: readonly PolicyResult[],
  reason?: DecisionReason,
): Decision {
  const mask = shadowMask(policies, false);
  if (mask === undefined) return plainDecision(policies, results, reason);
  if (mask === true) return applyShadow(plainDecision(policies, results, reason));
  return partlyShadowed(policies, results, mask, reason);
}

/** `toDecision` for policies none of which is shadowed (the limiter's hot path). */
export function plainDecision(
  policies: readonly Policy[],
  results: readonly PolicyResult[],
  reason?: DecisionReason,
): Decision {
  const n = policies.length;
  const d = n === 1 ? single(policies[0]!, results[0]!) : several(policies, results, n);
  return reason === undefined ? d : { ...d, reason };
}

function several(
  policies: readonly Policy[],
  results: readonly PolicyResult[],
  n: number,
): Decision {
  let allowed = true;
  let resetAfterMs = 0;
  let retryAfterMs = 0;
  let delayMs = 0;
  const parts = new Array<PolicyDecision>(n);
  let binding = part(policies[0]!, results[0]!);
  parts[0] = binding;
  for (let i = 0; i < n; i++) {
    const r = results[i]!;
    if (!r.allowed) allowed = false;
    resetAfterMs = Math.max(resetAfterMs, r.resetAfterMs);
    retryAfterMs = Math.max(retryAfterMs, r.retryAfterMs);
    delayMs = Math.max(delayMs, r.delayMs);
    if (i > 0) {
      const p = part(policies[i]!, r);
      parts[i] = p;
      if (bindsInstead(p, binding)) binding = p;
    }
  }
  return combined(allowed, binding, resetAfterMs, retryAfterMs, delayMs, parts);
}
