// The script's protocol: the ARGV a call sends (after its KEYS, which are `call.keys`) and the
// reply it reads back. The script itself is assembled in assemble.ts.
import { FloodgateError } from '../errors.js';
import type { PerCallParams } from '../policies/kinds.js';
import { POLICY_TABLE } from '../policies/table.js';
import type { PolicyResult, StoreCall } from '../store-types.js';
import type { Policy } from '../types.js';
import { paramCount } from './assemble.js';

/** Where a per-call parameter block goes (from the first parameter) and who writes it. */
interface Slot {
  readonly at: number;
  readonly policy: Policy;
  readonly perCall: PerCallParams;
}

/**
 * A policies array's parameters, once: the static ones as strings (and '' where per-call ones
 * go), and the per-call slots, undefined for the kinds that have none.
 */
interface Encoded {
  readonly params: readonly string[];
  readonly slots: readonly Slot[] | undefined;
}

const paramsCache = new WeakMap<readonly Policy[], Encoded>();

function encodedOf(policies: readonly Policy[]): Encoded {
  let encoded = paramsCache.get(policies);
  if (encoded === undefined) {
    const params: string[] = [];
    const slots: Slot[] = [];
    for (const p of policies) {
      // A parameter a policy lacks (one built before its kind read it) goes as 0: the fragment
      // reads it as the release before did (token_bucket.lua's tau_i).
      const n = paramCount(p.kind);
      for (let i = 0; i < n; i++) params.push(String(p.params[i] ?? 0));
      const perCall = POLICY_TABLE[p.kind].perCall;
      if (perCall !== undefined) {
        slots.push({ at: params.length, policy: p, perCall });
        for (let i = 0; i < perCall.args; i++) params.push('');
      }
    }
    // Then each blocking policy's blockFor, as the script's blocks read them (assemble.ts).
    for (const p of policies) if (p.blockForMs !== undefined) params.push(String(p.blockForMs));
    encoded = { params, slots: slots.length === 0 ? undefined : slots };
    paramsCache.set(policies, encoded);
  }
  return encoded;
}

/**
 * `ARGV` for `scriptFor(call.policies)` (its `KEYS` are `call.keys`). `now` in integer ms uses
 * the caller's clock; undefined lets the script read Redis `TIME`. `deadline` is a Redis `TIME`
 * in ms after which the script must not charge (its caller has given up); undefined for none.
 * `clock` is this host's clock, read only for a quota on the server clock: its period ends are
 * sent for the host's time, and the script picks among them by `TIME`.
 * @example
 * `ARGV` for a call decided on this process's clock (`clock: 'client'`).
 * ```ts
 * import type { StoreCall } from '@floodgate/core/store';
 * import { encodeScriptArgs } from '@floodgate/core/redis';
 *
 * declare const call: StoreCall;
 * const argv = encodeScriptArgs(call, Date.now()); // [mode, cost, now, deadline, ...params]
 * ```
 * @public
 */
export function encodeScriptArgs(
  call: StoreCall,
  now?: number,
  deadline?: number,
  clock: () => number = Date.now,
): string[] {
  const args = new Array<string>(scriptArgCount(call));
  writeScriptArgs(args, 0, call, now, deadline, clock);
  return args;
}

/** How many `ARGV` entries `encodeScriptArgs(call, …)` makes. */
export function scriptArgCount(call: StoreCall): number {
  return 4 + encodedOf(call.policies).params.length;
}

/** Writes `encodeScriptArgs(call, now, deadline, clock)` into `target` from `at`; returns the count. */
export function writeScriptArgs(
  target: string[],
  at: number,
  call: StoreCall,
  now?: number,
  deadline?: number,
  clock: () => number = Date.now,
): number {
  const { params, slots } = encodedOf(call.policies);
  target[at] = call.mode;
  // Per-policy costs as one list (compose.lua ARGV[2]), for their own script (lua.ts scriptFor).
  target[at + 1] = call.costs === undefined ? String(call.cost) : call.costs.join(' ');
  target[at + 2] = now === undefined ? '' : String(now);
  target[at + 3] = deadline === undefined ? '' : String(deadline);
  for (let i = 0; i < params.length; i++) target[at + 4 + i] = params[i]!;
  if (slots !== undefined) {
    const when = now ?? clock();
    for (const s of slots) s.perCall.write(s.policy, when, target, at + 4 + s.at);
  }
  return 4 + params.length;
}

/**
 * What one run of the limit script said.
 * @example
 * ```ts
 * import { decodeScriptReply, type ScriptReply } from '@floodgate/core/redis';
 *
 * declare const reply: unknown; // what EVALSHA returned for a one-policy call
 * const { results, time }: ScriptReply = decodeScriptReply(reply, 1);
 * console.log(results[0]?.allowed, time);
 * ```
 * @public
 */
export interface ScriptReply {
  readonly results: PolicyResult[];
  /** Redis `TIME` in ms as the script read it; 0 when it did not read it (client clock, no deadline). */
  readonly time: number;
}

/**
 * Reads the script's reply: five integers per policy (seven for a call with `overrides`: then
 * the override's until and limit, 0 and 0 for none), then the Redis time. A `'late'` reply (the
 * script ran at or after the call's deadline and wrote nothing) is `STORE_TIMEOUT`; anything else
 * unexpected is `STORE_PROTOCOL`.
 * @example
 * A bad reply is a `FloodgateError`, never a wrong decision.
 * ```ts
 * import { isFloodgateError } from '@floodgate/core';
 * import { decodeScriptReply } from '@floodgate/core/redis';
 *
 * try {
 *   decodeScriptReply(['not', 'a', 'reply'], 1);
 * } catch (error) {
 *   if (isFloodgateError(error)) console.log(error.code); // 'STORE_PROTOCOL'
 * }
 * ```
 * @public
 */
export function decodeScriptReply(
  reply: unknown,
  policyCount: number,
  overrides = false,
): ScriptReply {
  if (Array.isArray(reply) && reply.length === 2 && String(reply[0]) === 'late') {
    throw new FloodgateError(
      'STORE_TIMEOUT',
      'the limit script ran at or after its deadline and charged nothing',
    );
  }
  const width = policyCount * fieldsPerPolicy(overrides);
  if (!Array.isArray(reply) || reply.length !== width + 1) {
    throw new FloodgateError('STORE_PROTOCOL', 'unexpected reply from the limit script');
  }
  return {
    results: decodeResults(reply, 0, policyCount, overrides),
    time: Number(reply[width]),
  };
}

/** A decision's fields per policy in a reply: five, and the override's two with `overrides`. */
export function fieldsPerPolicy(overrides: boolean | undefined): number {
  return overrides === true ? 7 : 5;
}

/** The fields per policy of one decision, from `reply[at]` on (a batch's reply holds many). */
export function decodeResults(
  reply: readonly unknown[],
  at: number,
  policyCount: number,
  overrides = false,
): PolicyResult[] {
  const results: PolicyResult[] = [];
  const step = fieldsPerPolicy(overrides);
  for (let i = at; i < at + policyCount * step; i += step) {
    const r: PolicyResult = {
      allowed: Number(reply[i]) === 1,
      remaining: Number(reply[i + 1]),
      resetAfterMs: Number(reply[i + 2]),
      retryAfterMs: Number(reply[i + 3]),
      delayMs: Number(reply[i + 4]),
    };
    // An override in force: its until (never 0) and the limit it ran on (0: a block).
    const until = overrides ? Number(reply[i + 5]) : 0;
    results.push(until > 0 ? { ...r, override: { limit: Number(reply[i + 6]), until } } : r);
  }
  return results;
}
