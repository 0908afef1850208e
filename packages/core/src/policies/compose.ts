import type { PolicyResult, StoreCall } from '../store-types.js';
import type { Policy } from '../types.js';
import { newVerdict, type PolicyOutcome, type PolicyState, toOutcome } from './common.js';
import { POLICY_TABLE } from './table.js';

/**
 * The reference algorithm: one policy, its current state (undefined = empty), the time in integer
 * ms and the cost. Deterministic; MemoryStore runs it, the Lua fragments mirror it.
 * @example
 * Two requests a millisecond apart against a bucket of capacity 1.
 * ```ts
 * import { tokenBucket } from '@floodgate/core';
 * import { evaluatePolicy } from '@floodgate/core/store';
 *
 * const policy = tokenBucket({ limit: 1, interval: '1s' });
 * const first = evaluatePolicy(policy, undefined, 1_000, 1);
 * const second = evaluatePolicy(policy, first.next, 1_001, 1);
 * console.log(second.allowed, second.retryAfterMs); // false 999
 * ```
 */
export function evaluatePolicy(
  policy: Policy,
  state: PolicyState | undefined,
  now: number,
  cost: number,
): PolicyOutcome {
  const row = POLICY_TABLE[policy.kind];
  const p = policy.params;
  const v = newVerdict();
  // A log state is the log itself; a scalar state spreads over s0..s2 (a kind reads its own).
  const has = state !== undefined;
  const log = row.scalars === 0 ? state : undefined;
  const s = has && row.scalars > 0 ? state : undefined;
  // A quota's period is resolved at `now` (kinds.ts `PerCallParams`).
  const kernel = row.perCall === undefined ? row.kernel : row.perCall.kernelFor(policy);
  kernel(p[0], p[1], p[2], has, s?.[0] ?? 0, s?.[1] ?? 0, s?.[2] ?? 0, log, now, cost, v);
  return toOutcome(v, row.scalars);
}

/** What a charged or uncharged outcome reports (compose.lua builds the same reply). */
export function resultOf(o: PolicyOutcome, charged: boolean, peek: boolean): PolicyResult {
  return charged
    ? {
        allowed: true,
        remaining: o.nextRemaining,
        resetAfterMs: o.nextResetAfterMs,
        retryAfterMs: 0,
        delayMs: o.delayMs,
      }
    : {
        allowed: o.allowed,
        remaining: o.remaining,
        resetAfterMs: o.resetAfterMs,
        retryAfterMs: o.retryAfterMs,
        delayMs: peek ? o.delayMs : 0,
      };
}

/**
 * Evaluates all policies at `now` and says what to write: the reference composition that
 * compose.lua mirrors (all admit, or none is charged). `writes[i]` is the new state and TTL for
 * key i, or undefined to leave it.
 * @example
 * The heart of a simple in-process store: read the states, decide, write back what it says.
 * ```ts
 * import { evaluateAll, type PolicyState, type StoreCall } from '@floodgate/core/store';
 *
 * const states = new Map<string, PolicyState>();
 * function decide(call: StoreCall) {
 *   const before = call.keys.map((k) => states.get(k));
 *   const { results, writes } = evaluateAll(call, before, Date.now());
 *   // Each write also says when the state may be dropped (ttlMs).
 *   writes.forEach((w, i) => w && states.set(call.keys[i]!, w.state));
 *   return results;
 * }
 * ```
 */
export function evaluateAll(
  call: StoreCall,
  states: readonly (PolicyState | undefined)[],
  now: number,
): { results: PolicyResult[]; writes: ({ state: PolicyState; ttlMs: number } | undefined)[] } {
  const peek = call.mode === 'peek';
  const cost = peek ? 1 : call.cost;
  const outcomes: PolicyOutcome[] = [];
  let allowed = true;
  for (let i = 0; i < call.policies.length; i++) {
    const o = evaluatePolicy(call.policies[i]!, states[i], now, cost);
    if (!o.allowed) allowed = false;
    outcomes.push(o);
  }
  const charge = allowed && !peek;
  const results: PolicyResult[] = [];
  const writes: ({ state: PolicyState; ttlMs: number } | undefined)[] = [];
  for (const o of outcomes) {
    results.push(resultOf(o, charge, peek));
    writes.push(charge ? { state: o.next!, ttlMs: o.nextResetAfterMs } : undefined);
  }
  return { results, writes };
}
