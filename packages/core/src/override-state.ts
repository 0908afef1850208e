// A stored override (`limiter.override`), as every store holds it and the reference composition
// (policies/compose.ts `evaluateAll`) reads it: per policy, the state `[until, limit, ...params]`
// under the policy's override key. `params` are the policy's own parameters rebuilt for `limit`
// by the limiter (override-params.ts), so a store runs the kind's arithmetic on them unchanged;
// `limit` 0 blocks. redis/assemble-overrides.ts mirrors every rule here in Lua.
import type { PolicyState } from './policies/common.js';
import { POLICY_TABLE } from './policies/table.js';
import type { PolicyResult, StoreCall } from './store-types.js';
import type { Policy } from './types.js';

/** How many numbers a policy's override state holds: until, limit, and the kind's parameters. */
export function overrideWidth(policy: Policy): number {
  const row = POLICY_TABLE[policy.kind];
  return 2 + (row.overrideParams ?? row.params);
}

/**
 * The overrides in force at `now` in a call's states (after its policy and block keys), by
 * policy; undefined when the call reads none or none is in force, so a call without one takes
 * the reference's usual path. An override is in force while `now < until`; a state of the wrong
 * width (written for another version of the policy) is ignored, as the script's pattern does.
 */
export function overridesInForce(
  call: StoreCall,
  states: readonly (PolicyState | undefined)[],
  now: number,
): (PolicyState | undefined)[] | undefined {
  if (call.overrides !== true) return undefined;
  const policies = call.policies;
  const n = policies.length;
  let at = n;
  for (const p of policies) if (p.blockForMs !== undefined) at++;
  let out: (PolicyState | undefined)[] | undefined;
  for (let i = 0; i < n; i++) {
    const s = states[at + i];
    if (s === undefined || !(s[0]! > now) || s.length !== overrideWidth(policies[i]!)) continue;
    out ??= new Array<PolicyState | undefined>(n).fill(undefined);
    out[i] = s;
  }
  return out;
}

/**
 * The policy as it runs under its override: the override's parameters instead of its own. A
 * block (limit 0) runs on the policy's own: it denies whatever they say (`overrideBlock`).
 */
export function underOverride(policy: Policy, o: PolicyState | undefined): Policy {
  if (o === undefined || o[1] === 0) return policy;
  const params = policy.params.slice() as [number, number, number, number?];
  for (let j = 2; j < o.length; j++) params[j - 2] = o[j]!;
  // A token bucket's fill time at its limit follows the override's limit (kinds.ts overrideParams).
  if (params.length > o.length - 2) params[3] = o[1]! * params[1];
  return { ...policy, params };
}

/** The ms left on an override that blocks (limit 0); 0 for none or one that does not block. */
export function overrideBlock(o: PolicyState | undefined, now: number): number {
  return o !== undefined && o[1] === 0 ? o[0]! - now : 0;
}

/** The result with the override it ran on. */
export function withOverride(r: PolicyResult, o: PolicyState | undefined): PolicyResult {
  return o === undefined ? r : { ...r, override: { limit: o[1]!, until: o[0]! } };
}

/** An override state as a Redis string: its numbers, space-separated (what the script matches). */
export function encodeOverride(state: PolicyState): string {
  return state.join(' ');
}

/** A Redis string back to an override state; undefined for no key or anything malformed. */
export function decodeOverride(raw: unknown): PolicyState | undefined {
  if (typeof raw !== 'string' && !(raw instanceof Uint8Array)) return undefined;
  const text = typeof raw === 'string' ? raw : new TextDecoder().decode(raw);
  if (!/^\d+( \d+)+$/.test(text)) return undefined;
  const state = text.split(' ').map(Number);
  return state.every(Number.isSafeInteger) ? state : undefined;
}
