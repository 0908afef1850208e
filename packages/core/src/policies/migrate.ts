// Migrating keys from 0.1 (`createLimiter({ migrateKeys: '0.1' })`; docs/algorithms.md, "Migrating
// keys from 0.1"). 0.1 named a policy's key by a hash of all its parameters, limit included, and
// encoded its state with the limit; 1.0 names it by what it counts. With the option a call reads
// the 1.0 key and the 0.1 key of each policy, decides on the stricter of the two states, and
// writes the result to both, each in its own format: a 0.1 process still running reads what 1.0
// charged, and 1.0 reads what 0.1 charged, so no identity is counted from zero during the switch.
// This module is the reference: the states here are decoded (the formats are Lua's business,
// redis/assemble-migrate.ts); `evaluateAll` calls `mergedStates` and `mirroredWrites`.
import { sha256Base64url } from '../hash.js';
import type { StoreCall } from '../store-types.js';
import type { Policy } from '../types.js';
import type { PolicyState } from './common.js';
import { POLICY_TABLE } from './table.js';

type Write = { state: PolicyState; ttlMs: number } | null | undefined;
type Evaluate = (policy: Policy, state: PolicyState | undefined, now: number) => number;

/**
 * The releases whose keys a limiter can migrate from (`migrateKeys`, `StoreCall.migrate`).
 * @example
 * ```ts
 * import type { MigrateKeysFrom, StoreCall } from '@floodgate/core/store';
 *
 * const from: MigrateKeysFrom = '0.1';
 * const migrating = (call: StoreCall): boolean => call.migrate === from;
 * ```
 * @beta
 */
export type MigrateKeysFrom = '0.1';

const LEGACY = new WeakMap<Policy, string>();

/**
 * The id 0.1 gave this policy: its kind's tag and 5 characters of the SHA-256 of
 * `<kind>:<params joined by ':'>` (and `:<per>:<timeZone>` for a quota), the very string 0.1's
 * `policyId` hashed. The parameters are today's, so they must be the ones the 0.1 fleet runs:
 * limits must not change during a migration.
 * @example
 * The 0.1 key a limiter with `migrateKeys: '0.1'` reads beside the 1.0 key.
 * ```ts
 * import { fixedWindow } from '@floodgate/core';
 * import { encodeIdentity, legacyPolicyId, policyKey } from '@floodgate/core/store';
 *
 * const policy = fixedWindow({ limit: 100, window: '1m' });
 * const key = policyKey('api', encodeIdentity('user_42'), legacyPolicyId(policy)); // 'api:{user_42}:fw:NiKzO'
 * ```
 * @beta
 */
export function legacyPolicyId(policy: Policy): string {
  let id = LEGACY.get(policy);
  if (id === undefined) {
    const row = POLICY_TABLE[policy.kind];
    const c = policy.calendar;
    const more = c === undefined ? '' : `:${c.per}:${c.timeZone}`;
    // 0.1 hashed the three parameters it had (a token bucket's fourth came in 1.1).
    const params = policy.params.slice(0, 3).join(':');
    id = `${row.tag}:${sha256Base64url(`${policy.kind}:${params}${more}`).slice(0, 5)}`;
    LEGACY.set(policy, id);
  }
  return id;
}

/** Where a call's 0.1 keys begin: after the policies', block and override keys. */
export function legacyKeyStart(call: StoreCall): number {
  const n = call.policies.length;
  let blocks = 0;
  for (const p of call.policies) if (p.blockForMs !== undefined) blocks++;
  return n + blocks + (call.overrides === true ? n : 0);
}

/** Log units with a time after `now − w` (a log state is `[ms, before, cost, …]`). */
function liveUnits(s: PolicyState, w: number, now: number): number {
  let units = 0;
  for (let i = 0; i + 2 < s.length; i += 3) if (s[i]! > now - w) units += s[i + 2]!;
  return units;
}

/** A bucket's arrival time as a fraction-carrying number for comparison only. */
function arrival(s: PolicyState, perMs: number): number {
  const from = s[2] !== undefined && s[2] > 0 ? s[2] : perMs;
  return s[0]! + s[1]! / from;
}

/**
 * The stricter of a policy's 1.0 state `a` and its 0.1 state `b` (decoded; a 0.1 bucket state is
 * `[tatMs, ticks]` in the policy's own ticks per ms): windows, the newer window's, and within one
 * window the larger count; a sliding window aligned by window, each count the larger; a bucket
 * the later arrival time; a log the one with more units in `(now − w, now]`.
 */
export function stricterState(
  policy: Policy,
  a: PolicyState | undefined,
  b: PolicyState | undefined,
  now: number,
): PolicyState | undefined {
  if (b === undefined) return a;
  if (a === undefined) return normalLegacy(policy, b);
  const p = policy.params;
  switch (policy.kind) {
    case 'fixedWindow':
    case 'quota':
      if (b[0]! > a[0]!) return b;
      if (b[0]! < a[0]!) return a;
      return b[1]! > a[1]! ? b : a;
    case 'slidingWindow': {
      const w = p[1]!;
      const [newer, older] = b[0]! > a[0]! ? [b, a] : [a, b];
      if (newer[0] === older[0]) {
        return [a[0]!, Math.max(a[1]!, b[1]!), Math.max(a[2]!, b[2]!)];
      }
      if (newer[0]! - older[0]! === w)
        return [newer[0]!, newer[1]!, Math.max(newer[2]!, older[1]!)];
      return newer;
    }
    case 'slidingWindowLog':
      return liveUnits(b, p[1]!, now) > liveUnits(a, p[1]!, now) ? b : a;
    default: {
      // tokenBucket, leakyBucket: [capacity, perUnit, perMs].
      const nb = normalLegacy(policy, b);
      return arrival(nb, p[2]!) > arrival(a, p[2]!) ? nb : a;
    }
  }
}

/** A 0.1 bucket state carries no ticks per ms: they are the policy's own. */
function normalLegacy(policy: Policy, b: PolicyState): PolicyState {
  const k = policy.kind;
  if ((k === 'tokenBucket' || k === 'leakyBucket') && b.length === 2) {
    return [b[0]!, b[1]!, policy.params[2]!];
  }
  return b;
}

/**
 * The states `evaluateAll` decides on for a call with `migrate`: each policy's and each block's
 * the stricter of its 1.0 key's and its 0.1 key's (a block, the later until). The 0.1 keys'
 * states follow the others in `states` (`legacyKeyStart`); what is returned holds the call's
 * other keys only.
 */
export function mergedStates(
  call: StoreCall,
  states: readonly (PolicyState | undefined)[],
  now: number,
): (PolicyState | undefined)[] {
  const policies = call.policies;
  const n = policies.length;
  const start = legacyKeyStart(call);
  const out = states.slice(0, start);
  for (let i = 0; i < n; i++)
    out[i] = stricterState(policies[i]!, states[i], states[start + i], now);
  for (let i = 0, b = n, lb = start + n; i < n; i++) {
    if (policies[i]!.blockForMs === undefined) continue;
    const x = states[b];
    const y = states[lb];
    if (y !== undefined && (x === undefined || y[0]! > x[0]!)) out[b] = y;
    b++;
    lb++;
  }
  return out;
}

/**
 * The writes of a call with `migrate`: the policies' and blocks' writes, then the same again for
 * their 0.1 keys (nothing for the override keys, which are never written).
 */
export function mirroredWrites<W>(call: StoreCall, writes: readonly W[], empty: W): W[] {
  const n = call.policies.length;
  const out = writes.slice();
  const start = legacyKeyStart(call);
  while (out.length < start) out.push(empty);
  for (let i = 0; i < n; i++) out.push(writes[i] as W);
  for (let b = n; b < writes.length; b++) out.push(writes[b] as W);
  return out;
}

function same(a: PolicyState | undefined, b: PolicyState | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The stricter state folded onto the 1.0 keys where the 0.1 key held it and the call writes
 * nothing there itself (a denial, a peek, a refund that gives nothing back): the 1.0 key then
 * holds what the 0.1 processes charged, so once no 0.1 process is left and the option is removed,
 * nothing they charged is forgotten. The TTL is the time until the state is empty (`resetAfter`,
 * the kernel's `resetAfterMs`); a block's, the time it has left. Lua: `premerge`, which folds
 * before deciding (peeks included).
 */
export function foldWrites(
  call: StoreCall,
  states: readonly (PolicyState | undefined)[],
  merged: readonly (PolicyState | undefined)[],
  writes: Write[],
  now: number,
  resetAfter: Evaluate,
): Write[] {
  const policies = call.policies;
  const n = policies.length;
  for (let i = 0; i < n; i++) {
    const m = merged[i];
    if (writes[i] !== undefined || m === undefined || same(m, states[i])) continue;
    const ttl = resetAfter(policies[i]!, m, now);
    if (ttl > 0) writes[i] = { state: m, ttlMs: ttl };
  }
  for (let i = 0, b = n; i < n; i++) {
    if (policies[i]!.blockForMs === undefined) continue;
    const m = merged[b];
    if (writes[b] === undefined && m !== undefined && !same(m, states[b]) && m[0]! > now) {
      writes[b] = { state: m, ttlMs: m[0]! - now };
    }
    b++;
  }
  return writes;
}
