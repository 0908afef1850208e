import { FloodgateError, type Limiter, type Policy } from '@floodgate/core';
import { LRUCache } from 'lru-cache';
import type { LimiterChoice, PolicyChoice, RateLimitRequest } from './types.js';

/**
 * How many distinct policy sets one `policy` function keeps a limiter for. Tiers are few; a
 * function that makes a policy per user would otherwise grow without bound. An evicted set loses
 * nothing but its limiter's in-process state (breaker, block cache): counts live in the store.
 */
export const POLICY_CACHE_MAX = 256;

function isPolicy(value: unknown): value is Policy {
  const p = value as Policy | null;
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof p.kind === 'string' &&
    typeof p.name === 'string' &&
    typeof p.id === 'string' &&
    Array.isArray(p.params)
  );
}

/**
 * What makes two policies interchangeable: the kind, the name (headers report it), the id (what is
 * counted), the parameters the store sees (the limits: two tiers share an id, not a limiter), and
 * what the id leaves out on purpose: `blockFor` and `shadow` (a watched tier and an enforced one,
 * or a tier with a penalty and one without, share a count but must not share a limiter).
 */
const signature = (p: Policy): string =>
  `${p.kind}:${p.name}:${p.id}:${p.params.join(',')}:${p.blockForMs ?? ''}:${p.shadow === true ? 's' : ''}`;

/**
 * Turns a `policy` function of the request into a limiter choice: one limiter per distinct set
 * of policies, built on first use and kept (at most `POLICY_CACHE_MAX`, least recently used out).
 * So `policy: (req) => tokenBucket({ limit: plan(req) === 'pro' ? 1000 : 100, interval: '1m' })`
 * costs one store round trip per request, like a fixed policy. A value that is not a policy, a
 * list of them or `undefined` (skip the rule) throws `FloodgateError('INVALID_OPTION')`, which the
 * middleware answers as it answers any failure to decide (`onError`, then `onLimiterError`).
 */
export function choosePolicy<Raw>(
  choose: Extract<PolicyChoice<Raw>, (...args: never[]) => unknown>,
  build: (policy: Policy | readonly Policy[]) => Limiter,
  where: string,
): LimiterChoice<Raw> {
  const limiters = new LRUCache<string, Limiter>({ max: POLICY_CACHE_MAX });
  return async (request: RateLimitRequest<Raw>) => {
    const chosen: unknown = await choose(request);
    if (chosen === undefined) return undefined;
    const list: readonly unknown[] = Array.isArray(chosen) ? chosen : [chosen];
    if (list.length === 0 || !list.every(isPolicy)) {
      throw new FloodgateError(
        'INVALID_OPTION',
        `${where}: the policy function must return a policy (tokenBucket(), fixedWindow(), …), a non-empty list of them, or undefined`,
      );
    }
    const id = (list as readonly Policy[]).map(signature).join('\n');
    let limiter = limiters.get(id);
    if (limiter === undefined) {
      limiter = build(chosen as Policy | readonly Policy[]);
      limiters.set(id, limiter);
    }
    return limiter;
  };
}
