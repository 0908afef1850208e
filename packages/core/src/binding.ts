import type { Decision, PolicyDecision } from './types.js';

/**
 * ms until a policy's units are back. A denied policy's are never back before its retry time:
 * a header built from this must not promise quota before the request could pass.
 */
export function quotaBackMs(p: PolicyDecision): number {
  return p.allowed ? p.resetAfterMs : Math.max(p.resetAfterMs, p.retryAfterMs);
}

/**
 * Whether `p`, met after `current` in policy order, binds instead of it (the rule documented on
 * `Decision.binding`): a denial before an admission; then fewer units left; or as few, of the
 * same quota, and back later. A tie of different quotas keeps the earlier policy, so `limit` is
 * the first tied policy's. With one cost for every policy a denied policy always has fewer units
 * left than an admitting one; with per-policy costs (`Cost`) it may not, and it still binds.
 */
export function bindsInstead(p: PolicyDecision, current: PolicyDecision): boolean {
  if (p.allowed !== current.allowed) return !p.allowed;
  if (p.remaining !== current.remaining) return p.remaining < current.remaining;
  return p.limit === current.limit && quotaBackMs(p) > quotaBackMs(current);
}

/**
 * A decision of several policies from what was gathered over them: the binding policy names
 * `limit` and `remaining`, waits count only on the side they apply to (`retryAfterMs` when
 * denied, `delayMs` when allowed). One limiter's policies (decision.ts) and several limiters'
 * (merge.ts) are assembled here alike.
 */
export function combined(
  allowed: boolean,
  binding: PolicyDecision,
  resetAfterMs: number,
  retryAfterMs: number,
  delayMs: number,
  policies: readonly PolicyDecision[],
): Decision {
  return {
    allowed,
    limit: binding.limit,
    remaining: binding.remaining,
    resetAfterMs,
    retryAfterMs: allowed ? 0 : retryAfterMs,
    delayMs: allowed ? delayMs : 0,
    policies,
    binding,
  };
}
