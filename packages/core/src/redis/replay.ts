// The client's half of batch.lua's Repeats: a run of identical calls that the script decided as
// one call of n times the cost comes back as the state before them, and each call's decision is
// the TypeScript reference (evaluateAll, which decides as the script does: the Lua mirror tests)
// run on that state, one call after another, as the script would have run them.

import type { PolicyState } from '../policies/common.js';
import { evaluateAll } from '../policies/compose.js';
import { windowRadix } from '../policies/fixed_window.js';
import { QUOTA_RADIX } from '../policies/quota.js';
import { slidingRadix } from '../policies/sliding_window.js';
import type { PolicyResult, StoreCall } from '../store-types.js';
import type { Policy } from '../types.js';

/** No key: Redis's nil (the script's false), as each client reads it. */
const none = (raw: unknown): boolean => raw === null || raw === undefined || raw === false;

/**
 * A key's value as the script holds it, for a kind that can repeat (fixedWindow, slidingWindow,
 * quota, tokenBucket, leakyBucket): the integer the fragments pack, or their "a:b[:c]" string
 * where they do not; undefined for no key. The same steps as the fragments' decode, in the same
 * doubles: the radixes are powers of two, so every quotient is exact. Nothing here depends on the
 * policy's limit: a state written under another limit reads the same.
 */
export function decodeState(raw: unknown, policy: Policy): PolicyState | undefined {
  if (none(raw)) return undefined;
  if (typeof raw === 'string' && raw.includes(':')) return raw.split(':').map(Number);
  const v = Number(raw);
  const [, w, perMs] = policy.params as readonly number[];
  if (policy.kind === 'fixedWindow' || policy.kind === 'quota') {
    // A quota's period end is a whole minute: the packed k is in minutes.
    const quota = policy.kind === 'quota';
    const radix = quota ? QUOTA_RADIX : windowRadix(w!);
    const k = Math.floor(v / radix);
    return [k * (quota ? 60_000 : w!), v - k * radix];
  }
  if (policy.kind === 'slidingWindow') {
    const radix = slidingRadix(w!);
    const q = Math.floor(v / radix);
    const k = Math.floor(q / radix);
    return [k * w!, q - k * radix, v - q * radix];
  }
  // A bucket's integer is its arrival time in whole ms (no ticks): the rate does not matter.
  return [v, 0, perMs!];
}

/**
 * The decisions of `n` calls like `call`, one after another at `now`, from the values in `raws`
 * (each policy's key, as `decodeState` reads it, then each block key); undefined unless every
 * one of them is admitted, which is what the script found when it charged them as one.
 */
export function replayRepeats(
  call: StoreCall,
  raws: readonly unknown[],
  now: number,
  n: number,
): PolicyResult[][] | undefined {
  const policies = call.policies;
  // Each policy's key, then each blocking policy's block key (the ms its block runs until).
  const blocks = policies.filter((p) => p.blockForMs !== undefined).length;
  if (raws.length !== policies.length + blocks) return undefined;
  const states = raws.map((raw, i) =>
    i < policies.length ? decodeState(raw, policies[i]!) : none(raw) ? undefined : [Number(raw)],
  );
  const out: PolicyResult[][] = [];
  for (let i = 0; i < n; i++) {
    const { results, writes } = evaluateAll(call, states, now);
    for (const r of results) if (!r.allowed) return undefined;
    out.push(results);
    // An admission charges each policy and sets no block.
    for (let j = 0; j < policies.length; j++) states[j] = writes[j]?.state;
  }
  return out;
}
