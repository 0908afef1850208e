// Limit scripts: one lean script per combination of policy kinds (assembled in assemble.ts from
// the fragments in ../policies/*.lua), compiled once per process with its SHA-1. What a script
// takes and returns is protocol.ts.
import { FloodgateError } from '../errors.js';
import { sha1Hex } from '../hash.js';
import { shadowingOf } from '../policies/compose.js';
import type { PolicyKind } from '../policies/kinds.js';
import type { Policy } from '../types.js';
import { assembleScript, label } from './assemble.js';
import { assembleBatchScript } from './assemble-batch.js';

/**
 * One assembled limit script: its text (for `EVAL`) and SHA-1 (for `EVALSHA`).
 * @example
 * Loading a script ahead of time, so the first `EVALSHA` does not meet `NOSCRIPT`.
 * ```ts
 * import { type LimitScript, scriptForKinds } from '@floodgate/core/redis';
 * import { Redis } from 'ioredis';
 *
 * const redis = new Redis();
 * const script: LimitScript = scriptForKinds(['tokenBucket', 'fixedWindow']);
 * const sha1 = await redis.call('SCRIPT', 'LOAD', script.source); // equals script.sha1
 * ```
 * @public
 */
export interface LimitScript {
  readonly source: string;
  readonly sha1: string;
}

// Lua allows 200 locals per function: the prelude takes 7, each policy 10, and with blockFor 1
// more per blocking policy and `blocked`; with overrides `ov` and a `blk` for every policy.
// At 16 policies that is at most 188, the mixed shadow tail's 3 included.
const MAX_POLICIES = 16;
const compiled = new Map<string, LimitScript>();
// By policies array, one map per variant: index overrides + 2 × migrate + 4 × per-policy costs
// (calls that migrate keys or carry per-policy costs are never batched: see RedisStore).
const byPolicies = Array.from({ length: 8 }, () => new WeakMap<readonly Policy[], LimitScript>());

/**
 * The one-call or the batch script for these kinds with its SHA-1, assembled once per process.
 * Both refuse more policies than a Lua function has locals for, so a batched call fails exactly
 * as a lone one would.
 */
export function compileScript(
  variant: 'one' | 'batch',
  kinds: readonly PolicyKind[],
  blocking: readonly boolean[] = [],
  shadowing: readonly boolean[] = [],
  overrides = false,
  migrate = false,
  costs = false,
): LimitScript {
  const signature = `${variant}:${label(kinds, blocking, shadowing, overrides, migrate, costs)}`;
  let script = compiled.get(signature);
  if (script === undefined) {
    if (kinds.length > MAX_POLICIES) {
      throw new FloodgateError('INVALID_POLICY', `at most ${MAX_POLICIES} policies per limiter`);
    }
    const source =
      variant === 'one'
        ? assembleScript(kinds, blocking, shadowing, overrides, migrate, costs)
        : assembleBatchScript(kinds, blocking, shadowing, overrides);
    script = { source, sha1: sha1Hex(source) };
    compiled.set(signature, script);
  }
  return script;
}

/**
 * The script for these kinds, assembled once per process.
 * @example
 * ```ts
 * import { scriptForKinds } from '@floodgate/core/redis';
 *
 * const { source, sha1 } = scriptForKinds(['slidingWindow']);
 * console.log(`EVALSHA ${sha1}`, `${source.length} bytes of Lua`);
 * ```
 * @public
 */
export function scriptForKinds(kinds: readonly PolicyKind[]): LimitScript {
  return compileScript('one', kinds);
}

/**
 * The script a call with these policies runs (`overrides`: a call that reads override keys,
 * `StoreCall.overrides`; `migrate`: `StoreCall.migrate`; `costs`: a call with per-policy
 * `StoreCall.costs`, which every `'settle'` has); cached per policies array (one per limiter).
 * @example
 * One decision with a client this package has no store for: `EVALSHA` with the call's keys.
 * ```ts
 * import { decodeScriptReply, encodeScriptArgs, scriptFor } from '@floodgate/core/redis';
 * import type { StoreCall } from '@floodgate/core/store';
 *
 * declare const call: StoreCall;
 * declare function evalsha(sha: string, keys: readonly string[], argv: string[]): Promise<unknown>;
 * const script = scriptFor(call.policies, call.overrides, call.migrate, call.costs !== undefined);
 * const reply = await evalsha(script.sha1, call.keys, encodeScriptArgs(call));
 * const { results } = decodeScriptReply(reply, call.policies.length, call.overrides);
 * ```
 * @public
 */
export function scriptFor(
  policies: readonly Policy[],
  overrides = false,
  migrate?: '0.1',
  costs = false,
): LimitScript {
  const cache =
    byPolicies[(overrides ? 1 : 0) + (migrate !== undefined ? 2 : 0) + (costs ? 4 : 0)]!;
  let script = cache.get(policies);
  if (script === undefined) {
    script = compileScript(
      'one',
      policies.map((p) => p.kind),
      blockingOf(policies),
      shadowingOf(policies) ?? [],
      overrides,
      migrate !== undefined,
      costs,
    );
    cache.set(policies, script);
  }
  return script;
}

/** Which policies block (`blockFor`); empty when none does, so their scripts are unchanged. */
export function blockingOf(policies: readonly Policy[]): boolean[] {
  const blocking = policies.map((p) => p.blockForMs !== undefined);
  return blocking.some(Boolean) ? blocking : [];
}
