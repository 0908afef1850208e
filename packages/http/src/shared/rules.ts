// The rules of a request, in order: each rule's key, limiter and cost, charged until one denies
// and peeked after that. The engine (engine.ts) turns the decisions into an outcome.
import { type Cost, type Decision, FloodgateError, type Limiter } from '@floodgate/core';
import type { AllowList } from './allow-list.js';
import type { ResolvedRule } from './options.js';
import { type Reserving, reserveWith } from './reservations.js';
import type { Charge } from './settle.js';
import type { RateLimitRequest } from './types.js';

/** `evaluateRules`' answer for a request whose key is on the allow list: nothing was charged. */
export const ALLOWED = Symbol('allowed');

async function chooseLimiter(
  rule: ResolvedRule,
  request: RateLimitRequest,
): Promise<Limiter | undefined> {
  if (typeof rule.limiter !== 'function') return rule.limiter;
  const chosen = await rule.limiter(request);
  if (chosen !== undefined && (typeof chosen !== 'object' || typeof chosen?.limit !== 'function')) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'the limiter function returned something that is not a limiter',
    );
  }
  return chosen;
}

const isThenable = <T>(value: T | PromiseLike<T>): value is PromiseLike<T> =>
  typeof (value as { then?: unknown } | null | undefined)?.then === 'function';

// Decisions made by shadow-mode limiters (`Limiter.shadow`): they hold nothing back.
export const shadowed = new WeakSet<Decision>();

/**
 * Evaluates the rules in order. After a denial the remaining rules are only peeked (reported,
 * not charged): a request that is refused anyway should not use up other quotas. With
 * `reserving` (`settle`), each admission is a reservation, kept in `charges` to be settled.
 */
export async function evaluateRules(
  rules: readonly ResolvedRule[],
  request: RateLimitRequest,
  allowList: AllowList | undefined,
  charges: Charge[] | undefined,
  reserving?: Reserving,
): Promise<Decision[] | typeof ALLOWED> {
  // Listed identities are looked for among every rule's key before any rule is charged.
  let keys: (string | undefined)[] | undefined;
  if (allowList?.hasKeys === true) {
    keys = [];
    for (const rule of rules) keys.push(await rule.key(request));
    if (allowList.keyAllowed(keys)) return ALLOWED;
  }
  const decisions: Decision[] = [];
  let denied = false;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i] as ResolvedRule;
    let key: string | undefined;
    if (keys !== undefined) key = keys[i];
    else {
      // Most keys answer at once: awaited only when they return a promise (each await on a
      // plain value still costs a turn of the microtask queue).
      const found = rule.key(request);
      key = isThenable(found) ? await found : found;
    }
    if (key === undefined) continue;
    // A fixed limiter is used as it is: no extra async call (and promise) per request for it.
    const limiter =
      typeof rule.limiter === 'function' ? await chooseLimiter(rule, request) : rule.limiter;
    if (limiter === undefined) continue;
    if (denied) {
      decisions.push(await limiter.peek(key));
      continue;
    }
    let cost: Cost;
    if (typeof rule.cost === 'function') {
      const charged = rule.cost(request);
      cost = isThenable(charged) ? await charged : charged;
    } else cost = rule.cost;
    if (reserving !== undefined) {
      // Kept apart from the plain decision every other module sees (req.rateLimit too).
      const { decision, charge } = await reserveWith(reserving, limiter, key, cost);
      if (limiter.shadow === true) shadowed.add(decision);
      if (!decision.allowed) denied = true;
      else charges?.push(charge);
      decisions.push(decision);
      continue;
    }
    const decision = await limiter.limit(key, { cost });
    if (limiter.shadow === true) shadowed.add(decision);
    if (!decision.allowed) denied = true;
    // Only what the limiter's store charged: a fallback's admission is not the store's to refund,
    // and the decision says which policies were (a shadowed one that would deny was not).
    else if (charges !== undefined && decision.reason === undefined) {
      charges.push({ limiter, key, cost, decision });
    }
    decisions.push(decision);
  }
  return decisions;
}
