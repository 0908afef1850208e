// Shadow mode: denials reported, not enforced. Two shapes (docs/operations.md, "Shadow mode"):
// - A limiter that shadows everything (`shadow: true`, or every policy shadowed) charges as an
//   enforcing one would (an admission charges, a would-be denial charges nothing), so its
//   decision is the store's, a denial turned into an admission that says `shadowDenied`.
// - A limiter that shadows some policies beside enforced ones: the store charges the enforced
//   policies as if the shadowed ones were absent (compose.ts evaluateAll), and the decision
//   describes the enforced policies only. The shadowed ones' parts are in `shadowed`, out of
//   everything a client is shown (headers, the 429 body, `Retry-After`, delays, merges).
import { bindsInstead, combined } from './binding.js';
import type { PolicyResult } from './store-types.js';
import type { Decision, DecisionReason, Policy, PolicyDecision } from './types.js';

/** Which policies are shadowed: all (`true`), some (by index), or none (`undefined`). */
export type ShadowMask = true | readonly boolean[] | undefined;

export function shadowMask(policies: readonly Policy[], limiterShadow: boolean): ShadowMask {
  if (limiterShadow || policies.every((p) => p.shadow === true)) return true;
  if (!policies.some((p) => p.shadow === true)) return undefined;
  return policies.map((p) => p.shadow === true);
}

/**
 * A fully shadowed limiter's decision: a denial turned into an admission that says
 * `shadowDenied`, its denying policies marked `shadow`. An admission is returned as it is.
 */
export function applyShadow(d: Decision): Decision {
  if (d.allowed) return d;
  const parts = d.policies.map((p) => (p.allowed ? p : { ...p, shadow: true as const }));
  const binding = parts[d.policies.indexOf(d.binding)] ?? d.binding;
  return { ...d, allowed: true, policies: parts, binding, shadowDenied: true };
}

function part(p: Policy, r: PolicyResult, shadow: boolean): PolicyDecision {
  const out = {
    name: p.name,
    kind: p.kind,
    limit: p.limit,
    windowMs: p.windowMs,
    allowed: Boolean(r.allowed),
    remaining: r.remaining,
    resetAfterMs: r.resetAfterMs,
    retryAfterMs: r.retryAfterMs,
    delayMs: r.delayMs,
  };
  return shadow ? { ...out, shadow: true } : out;
}

/**
 * The decision of a limiter that shadows some of its policies (`mask`, at least one of each):
 * allowed, waits, binding and `policies` from the enforced policies alone; the shadowed ones'
 * parts in `shadowed`, and `shadowDenied` when the enforced ones admitted and a shadowed one
 * would not have.
 */
export function partlyShadowed(
  policies: readonly Policy[],
  results: readonly PolicyResult[],
  mask: readonly boolean[],
  reason?: DecisionReason,
): Decision {
  const enforced: PolicyDecision[] = [];
  const shadowed: PolicyDecision[] = [];
  let allowed = true;
  let watchedDenied = false;
  let resetAfterMs = 0;
  let retryAfterMs = 0;
  let delayMs = 0;
  let binding: PolicyDecision | undefined;
  for (let i = 0; i < policies.length; i++) {
    const r = results[i]!;
    if (mask[i] === true) {
      if (!r.allowed) watchedDenied = true;
      shadowed.push(part(policies[i]!, r, true));
      continue;
    }
    const p = part(policies[i]!, r, false);
    enforced.push(p);
    if (!p.allowed) allowed = false;
    resetAfterMs = Math.max(resetAfterMs, p.resetAfterMs);
    retryAfterMs = Math.max(retryAfterMs, p.retryAfterMs);
    delayMs = Math.max(delayMs, p.delayMs);
    if (binding === undefined || bindsInstead(p, binding)) binding = p;
  }
  const d: Decision = {
    ...combined(allowed, binding!, Math.max(0, resetAfterMs), retryAfterMs, delayMs, enforced),
    shadowed,
  };
  const marked = allowed && watchedDenied ? { ...d, shadowDenied: true as const } : d;
  return reason === undefined ? marked : { ...marked, reason };
}
