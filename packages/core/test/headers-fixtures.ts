import type { Decision, PolicyDecision } from '../src/types.js';

/** A policy decision with defaults, for header tests. */
export function policy(over: Partial<PolicyDecision> = {}): PolicyDecision {
  return {
    name: 'default',
    kind: 'fixedWindow',
    allowed: true,
    limit: 100,
    windowMs: 60_000,
    remaining: 99,
    resetAfterMs: 60_000,
    retryAfterMs: 0,
    delayMs: 0,
    ...over,
  };
}

/** ms until a policy's units are back: a denied one's never before its retry time. */
export const backMs = (p: PolicyDecision): number =>
  p.allowed ? p.resetAfterMs : Math.max(p.resetAfterMs, p.retryAfterMs);

/**
 * The binding policy by the rule documented on `Decision.binding`, written as a filter rather
 * than the limiter's fold: fewest remaining; the first of those sets the limit; of those with
 * that limit, the first whose units come back last.
 */
export function bindingOf(all: readonly PolicyDecision[]): PolicyDecision {
  // A denial binds before an admission (Decision.binding), then the fewest units left.
  const denied = all.filter((p) => !p.allowed);
  const policies = denied.length > 0 ? denied : all;
  const fewest = Math.min(...policies.map((p) => p.remaining));
  const tied = policies.filter((p) => p.remaining === fewest);
  const quota = tied.length > 0 ? tied.filter((p) => p.limit === tied[0]!.limit) : [policies[0]!];
  const last = Math.max(...quota.map(backMs));
  return quota.find((p) => backMs(p) === last) ?? quota[0]!;
}

/** Derives the decision-level fields the way the limiter does. */
export function decisionOf(policies: PolicyDecision[], over: Partial<Decision> = {}): Decision {
  const binding = bindingOf(policies);
  const allowed = policies.every((p) => p.allowed);
  return {
    allowed,
    limit: binding.limit,
    remaining: binding.remaining,
    resetAfterMs: Math.max(...policies.map((p) => p.resetAfterMs)),
    retryAfterMs: allowed ? 0 : Math.max(...policies.map((p) => p.retryAfterMs)),
    delayMs: 0,
    policies,
    binding,
    ...over,
  };
}
