// Shadow mode: denials reported, not enforced. The store call is the one enforce mode makes (an
// admission charges, a would-be denial charges nothing), so shadowing is a mapping of the
// decision the store's results give, applied wherever the limiter builds one (store, fallback,
// blocked-key cache).
import { bindsInstead } from './binding.js';
import type { Decision, Policy, PolicyDecision } from './types.js';

/** Which policies are shadowed: all (`true`), some (by index), or none (`undefined`). */
export type ShadowMask = true | readonly boolean[] | undefined;

export function shadowMask(policies: readonly Policy[], limiterShadow: boolean): ShadowMask {
  if (limiterShadow || policies.every((p) => p.shadow === true)) return true;
  if (!policies.some((p) => p.shadow === true)) return undefined;
  return policies.map((p) => p.shadow === true);
}

/**
 * The decision with shadowed denials turned into admissions that say `shadowDenied`. A denial
 * by an enforced policy stands, its wait taken from the enforced policies only (and its binding,
 * when a shadowed policy bound). An admission is returned as it is (the same object).
 */
export function applyShadow(d: Decision, mask: true | readonly boolean[]): Decision {
  if (d.allowed) return d;
  // The shadowed policies that denied say so (`shadow: true`): they are reported, not enforced.
  const parts = d.policies.map((p, i) =>
    !p.allowed && (mask === true || mask[i] === true) ? { ...p, shadow: true as const } : p,
  );
  let binding = parts[d.policies.indexOf(d.binding)] ?? d.binding;
  if (mask !== true) {
    let enforced: PolicyDecision | undefined;
    let retryAfterMs = 0;
    let enforcedDenial = false;
    for (let i = 0; i < parts.length; i++) {
      if (mask[i] === true) continue;
      const p = parts[i]!;
      if (!p.allowed) enforcedDenial = true;
      retryAfterMs = Math.max(retryAfterMs, p.retryAfterMs);
      if (enforced === undefined || bindsInstead(p, enforced)) enforced = p;
    }
    if (enforcedDenial && enforced !== undefined) {
      // The denial stands: its wait and binding are the enforced policies'.
      if (mask[d.policies.indexOf(d.binding)] === true) binding = enforced;
      return {
        ...d,
        limit: binding.limit,
        remaining: binding.remaining,
        retryAfterMs: Math.max(0, retryAfterMs),
        policies: parts,
        binding,
      };
    }
  }
  return { ...d, allowed: true, policies: parts, binding, shadowDenied: true };
}
