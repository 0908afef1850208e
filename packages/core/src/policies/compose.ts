import { overrideBlock, overridesInForce, underOverride, withOverride } from '../override-state.js';
import type { PolicyResult, StoreCall } from '../store-types.js';
import type { Policy } from '../types.js';
import { newVerdict, type PolicyOutcome, type PolicyState, toOutcome } from './common.js';
import type { RefundKernel } from './kinds.js';
import { foldWrites, mergedStates, mirroredWrites } from './migrate.js';
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
 * @public
 */
export function evaluatePolicy(
  policy: Policy,
  state: PolicyState | undefined,
  now: number,
  cost: number,
  force = false,
): PolicyOutcome {
  const row = POLICY_TABLE[policy.kind];
  const p = policy.params;
  const v = newVerdict();
  v.force = force;
  // A log state is the log itself; a scalar state spreads over s0..s2 (a kind reads its own).
  const has = state !== undefined;
  const log = row.scalars === 0 ? state : undefined;
  const s = has && row.scalars > 0 ? state : undefined;
  // A quota's period is resolved at `now` (kinds.ts `PerCallParams`).
  const kernel = row.perCall === undefined ? row.kernel : row.perCall.kernelFor(policy);
  // A token bucket also reads its fill time at its limit (p3) and a state's writer's (s3).
  const p3 = p[3] ?? 0;
  kernel(
    p[0],
    p[1],
    p[2],
    has,
    s?.[0] ?? 0,
    s?.[1] ?? 0,
    s?.[2] ?? 0,
    log,
    now,
    cost,
    v,
    p3,
    s?.[3] ?? 0,
  );
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
 * A store's write for one key: the new state and its TTL, `null` to delete, undefined to leave.
 * @example
 * Applying `evaluateAll`'s writes to a Map of states.
 * ```ts
 * import type { PolicyState, StateWrite } from '@floodgate/core/store';
 *
 * function apply(states: Map<string, PolicyState>, key: string, w: StateWrite): void {
 *   if (w === null) states.delete(key);
 *   else if (w !== undefined) states.set(key, w.state); // expires after w.ttlMs
 * }
 * ```
 * @public
 */
export type StateWrite = { state: PolicyState; ttlMs: number } | null | undefined;

/** The policy's refund: its kind's, or resolved for it when the kind has per-call parameters. */
function refundOf(policy: Policy): RefundKernel {
  const row = POLICY_TABLE[policy.kind];
  return row.perCall === undefined ? row.refund : row.perCall.refundFor(policy);
}

/** A policy's result while its identity is blocked (`left` ms to go): denied, nothing left. */
function blockedResult(r: PolicyResult, left: number): PolicyResult {
  return {
    allowed: false,
    remaining: 0,
    resetAfterMs: Math.max(r.resetAfterMs, left),
    retryAfterMs: Math.max(r.retryAfterMs, left),
    delayMs: 0,
  };
}

/**
 * Which policies a store charges as shadowed (`Policy.shadow`), or undefined when none or all
 * are: a limiter whose every policy is shadowed charges as if all were enforced (its decisions
 * are mapped afterwards), so only a mix changes what a store charges.
 * @internal
 */
export function shadowingOf(policies: readonly Policy[]): boolean[] | undefined {
  let some = false;
  let all = true;
  for (const p of policies) {
    if (p.shadow === true) some = true;
    else all = false;
  }
  return some && !all ? policies.map((p) => p.shadow === true) : undefined;
}

/**
 * Evaluates all policies at `now` and says what to write: the reference composition that
 * compose.lua mirrors (all admit, or none is charged). `states` and `writes` follow `call.keys`:
 * one per policy, then one per block key (a block's state is `[until]`, in ms). `writes[i]` is
 * the new state and TTL for key i, `null` to delete it, or undefined to leave it.
 *
 * Penalties (`blockFor`): while a blocking policy's block runs (`until > now`), the call is denied,
 * that policy reports `retryAfterMs` of at least the time left, and nothing is charged or set.
 * Otherwise a `'limit'` call that a blocking policy denies sets that policy's block to
 * `now + blockForMs`. `'peek'` reports blocks and sets none; `'refund'` ignores them.
 *
 * Overrides (`call.overrides`: a state `[until, limit, ...params]` per policy after the block
 * keys): while one is in force (`until > now`), its policy runs on its parameters in every mode
 * and its result says so (`override`); one with limit 0 blocks as a running block does, until
 * `until`. Nothing is written to an override key.
 *
 * Migrating keys from 0.1 (`call.migrate`: after the override keys, each policy's 0.1 key, then
 * each blocking policy's 0.1 block key): each policy decides on the stricter of its two states
 * and each block runs to the later until (`mergedStates`, policies/migrate.ts), and every write
 * goes to both keys (`mirroredWrites`).
 *
 * Shadowed policies beside enforced ones (`shadowingOf`): the enforced policies decide, charge
 * and set blocks exactly as if the shadowed ones were absent; the shadowed ones are charged (and
 * set their blocks) as if every policy were enforced, so their counts predict enforcement.
 * @example
 * The heart of a simple in-process store: read the states, decide, write back what it says.
 * ```ts
 * import { evaluateAll, type PolicyState, type StoreCall } from '@floodgate/core/store';
 *
 * const states = new Map<string, PolicyState>();
 * function decide(call: StoreCall) {
 *   const before = call.keys.map((k) => states.get(k));
 *   const { results, writes } = evaluateAll(call, before, Date.now());
 *   // Each write also says when the state may be dropped (ttlMs); null deletes the key.
 *   writes.forEach((w, i) => {
 *     if (w) states.set(call.keys[i]!, w.state);
 *     else if (w === null) states.delete(call.keys[i]!);
 *   });
 *   return results;
 * }
 * ```
 * @public
 */
export function evaluateAll(
  call: StoreCall,
  states: readonly (PolicyState | undefined)[],
  now: number,
): { results: PolicyResult[]; writes: StateWrite[] } {
  if (call.migrate === undefined) return decideAll(call, states, now);
  const merged = mergedStates(call, states, now);
  const r = decideAll(call, merged, now);
  // The decision's writes go to both keys; a state folded from a 0.1 key, to the 1.0 key only.
  const writes = mirroredWrites<StateWrite>(call, r.writes, undefined);
  return { results: r.results, writes: foldWrites(call, states, merged, writes, now, resetAfter) };
}

/** The time until `state` is empty: a folded state's TTL (policies/migrate.ts `foldWrites`). */
function resetAfter(policy: Policy, state: PolicyState | undefined, now: number): number {
  return evaluatePolicy(policy, state, now, 1).resetAfterMs;
}

/**
 * A settle (`mode: 'settle'`, `call.costs` signed): each policy on its own, blocks untouched. A
 * positive cost is charged whatever the capacity says (the kernel forced: the state a charge
 * makes, past the limit if need be: debt); a negative one is refunded as `refund` gives back; 0
 * leaves the key. Each result is the policy's as its cost evaluated before the settle, uncharged
 * (compose.lua replies the same); the limiter does not read them.
 */
function settleAll(
  eff: readonly Policy[],
  states: readonly (PolicyState | undefined)[],
  now: number,
  costAt: (i: number) => number,
  ov: ReturnType<typeof overridesInForce>,
): { results: PolicyResult[]; writes: StateWrite[] } {
  const results: PolicyResult[] = [];
  const writes: StateWrite[] = [];
  for (let i = 0; i < eff.length; i++) {
    const p = eff[i]!;
    const c = costAt(i);
    const s = states[i];
    const o = evaluatePolicy(p, s, now, Math.abs(c), c > 0);
    results.push(withOverride(resultOf(o, false, false), ov?.[i]));
    if (c > 0) writes.push({ state: o.next!, ttlMs: o.nextResetAfterMs });
    else if (c < 0 && s !== undefined) {
      writes.push(refundOf(p)(p.params[0], p.params[1], p.params[2], s, now, -c));
    } else writes.push(undefined);
  }
  return { results, writes };
}

/** `evaluateAll` on the call's keys other than 0.1 ones. */
function decideAll(
  call: StoreCall,
  states: readonly (PolicyState | undefined)[],
  now: number,
): { results: PolicyResult[]; writes: StateWrite[] } {
  const policies = call.policies;
  const n = policies.length;
  const peek = call.mode === 'peek';
  // Per-policy costs (`call.costs`), signed in a settle; a peek evaluates 1 unit everywhere.
  const costs = call.costs;
  const costAt = (i: number): number => (peek ? 1 : costs === undefined ? call.cost : costs[i]!);
  // Stored overrides in force (override-state.ts): a policy runs on its override's parameters,
  // in every mode; one that blocks denies below, as a running block does.
  const ov = overridesInForce(call, states, now);
  const eff = ov === undefined ? policies : policies.map((p, i) => underOverride(p, ov[i]));
  if (call.mode === 'settle') return settleAll(eff, states, now, costAt, ov);
  const outcomes: PolicyOutcome[] = [];
  for (let i = 0; i < n; i++) outcomes.push(evaluatePolicy(eff[i]!, states[i], now, costAt(i)));
  const results: PolicyResult[] = [];
  const writes: StateWrite[] = [];
  if (call.mode === 'refund') {
    for (let i = 0; i < n; i++) {
      const p = eff[i]!;
      const s = states[i];
      results.push(withOverride(resultOf(outcomes[i]!, false, false), ov?.[i]));
      writes.push(
        s === undefined
          ? undefined
          : refundOf(p)(p.params[0], p.params[1], p.params[2], s, now, costAt(i)),
      );
    }
    return { results, writes };
  }
  // Two groups decide: the enforced policies among themselves, and all of them together (what
  // the shadowed ones are charged by). Without a mix both are every policy.
  const shadowing = shadowingOf(policies);
  const inGroup = (i: number): boolean => shadowing === undefined || !shadowing[i];
  // The time left on each blocking policy's block (0: none), read from the keys after n.
  const left: number[] = [];
  let okEnforced = true;
  let okAll = true;
  let blockedEnforced = false;
  let blockedAll = false;
  for (let i = 0, b = n; i < n; i++) {
    let ms = 0;
    if (policies[i]!.blockForMs !== undefined) {
      const s = states[b++];
      if (s !== undefined && s[0]! > now) ms = s[0]! - now;
    }
    if (ov !== undefined) ms = Math.max(ms, overrideBlock(ov[i], now));
    left.push(ms);
    const ok = outcomes[i]!.allowed && ms === 0;
    if (!ok) okAll = false;
    if (ms > 0) blockedAll = true;
    if (inGroup(i)) {
      if (!ok) okEnforced = false;
      if (ms > 0) blockedEnforced = true;
    }
  }
  const blockWrites: StateWrite[] = [];
  for (let i = 0; i < n; i++) {
    const o = outcomes[i]!;
    const p = policies[i]!;
    const enforced = inGroup(i);
    const charge = !peek && (enforced ? okEnforced : okAll);
    const penalize = !peek && (enforced ? !okEnforced && !blockedEnforced : !okAll && !blockedAll);
    let r = resultOf(o, charge, peek);
    let block: StateWrite;
    if (left[i]! > 0) r = blockedResult(r, left[i]!);
    else if (penalize && !o.allowed && p.blockForMs !== undefined) {
      r = blockedResult(r, p.blockForMs);
      block = { state: [now + p.blockForMs], ttlMs: p.blockForMs };
    }
    if (p.blockForMs !== undefined) blockWrites.push(block);
    results.push(withOverride(r, ov?.[i]));
    // A policy charged 0 (a per-policy cost) keeps its state as it is.
    const write = charge && (costs === undefined || costs[i]! > 0);
    writes.push(write ? { state: o.next!, ttlMs: o.nextResetAfterMs } : undefined);
  }
  return { results, writes: writes.concat(blockWrites) };
}
