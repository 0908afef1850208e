// What a refund gives back: with the admission's decision, exactly what it charged on the store
// (docs/operations.md, composition rules: a refund is at most what that request was charged).
import { FloodgateError } from './errors.js';
import type { ShadowMask } from './shadow.js';
import type { Decision, Policy } from './types.js';

/** `refund()`'s `decision`, checked: undefined when not given. */
export function refundDecisionOf(opts: unknown): Decision | undefined {
  if (typeof opts !== 'object' || opts === null || !Object.hasOwn(opts, 'decision')) {
    return undefined;
  }
  const { decision, ...rest } = opts as { decision?: unknown };
  const ok =
    typeof decision === 'object' &&
    decision !== null &&
    typeof (decision as Decision).allowed === 'boolean' &&
    Array.isArray((decision as Decision).policies);
  if (!ok || !costOnly(rest)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'refund() takes { cost, decision }, decision being the Decision of the admission given back',
    );
  }
  return decision as Decision;
}

/** `{ cost }` or `{}`. */
function costOnly(rest: object): boolean {
  for (const k in rest) if (k !== 'cost' && Object.hasOwn(rest, k)) return false;
  return true;
}

/**
 * For a limiter's policies and shadow mask: the policies an admission's decision charged on the
 * store, or undefined when it charged none there. The enforced subset is built once: a Redis
 * store caches a call's script by its policies array.
 */
export function refundScope(
  policies: readonly Policy[],
  shadow: ShadowMask,
): (decision: Decision) => readonly Policy[] | undefined {
  const enforced = Array.isArray(shadow)
    ? Object.freeze(policies.filter((p) => p.shadow !== true))
    : undefined;
  return (decision) => {
    if (!decision.allowed || decision.reason !== undefined) return undefined;
    if (decision.shadowDenied !== true) return policies;
    // A shadowed policy that would deny was not charged; nor was anything in full shadow mode.
    return enforced;
  };
}
