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

/** Derives the decision-level fields the way the limiter does (binding = fewest remaining). */
export function decisionOf(policies: PolicyDecision[], over: Partial<Decision> = {}): Decision {
  const binding = policies.reduce((a, b) => (b.remaining < a.remaining ? b : a));
  const allowed = policies.every((p) => p.allowed);
  return {
    allowed,
    limit: binding.limit,
    remaining: binding.remaining,
    resetAfterMs: Math.max(...policies.map((p) => p.resetAfterMs)),
    retryAfterMs: allowed ? 0 : Math.max(...policies.map((p) => p.retryAfterMs)),
    delayMs: 0,
    policies,
    ...over,
  };
}
