// The script's protocol: the ARGV a call sends (after its KEYS, which are `call.keys`) and the
// reply it reads back. The script itself is assembled in lua.ts.
import { FloodgateError } from '../errors.js';
import type { PolicyResult, StoreCall } from '../store-types.js';
import type { Policy } from '../types.js';
import { paramCount } from './lua.js';

const paramsCache = new WeakMap<readonly Policy[], readonly string[]>();

function paramsOf(policies: readonly Policy[]): readonly string[] {
  let params = paramsCache.get(policies) as string[] | undefined;
  if (params === undefined) {
    params = policies.flatMap((p) => p.params.slice(0, paramCount(p.kind)).map(String));
    // Then each blocking policy's blockFor, as the script's blocks read them (lua.ts).
    for (const p of policies) if (p.blockForMs !== undefined) params.push(String(p.blockForMs));
    paramsCache.set(policies, params);
  }
  return params;
}

/**
 * `ARGV` for `scriptFor(call.policies)` (its `KEYS` are `call.keys`). `now` in integer ms uses
 * the caller's clock; undefined lets the script read Redis `TIME`. `deadline` is a Redis `TIME`
 * in ms after which the script must not charge (its caller has given up); undefined for none.
 * @example
 * `ARGV` for a call decided on this process's clock (`clock: 'client'`).
 * ```ts
 * import type { StoreCall } from '@floodgate/core/store';
 * import { encodeScriptArgs } from '@floodgate/core/redis';
 *
 * declare const call: StoreCall;
 * const argv = encodeScriptArgs(call, Date.now()); // [mode, cost, now, deadline, ...params]
 * ```
 */
export function encodeScriptArgs(call: StoreCall, now?: number, deadline?: number): string[] {
  const args = new Array<string>(4 + paramsOf(call.policies).length);
  writeScriptArgs(args, 0, call, now, deadline);
  return args;
}

/** Writes `encodeScriptArgs(call, now, deadline)` into `target` from `at`; returns the count. */
export function writeScriptArgs(
  target: string[],
  at: number,
  call: StoreCall,
  now?: number,
  deadline?: number,
): number {
  const params = paramsOf(call.policies);
  target[at] = call.mode;
  target[at + 1] = String(call.cost);
  target[at + 2] = now === undefined ? '' : String(now);
  target[at + 3] = deadline === undefined ? '' : String(deadline);
  for (let i = 0; i < params.length; i++) target[at + 4 + i] = params[i]!;
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
 */
export interface ScriptReply {
  readonly results: PolicyResult[];
  /** Redis `TIME` in ms as the script read it; 0 when it did not read it (client clock, no deadline). */
  readonly time: number;
}

/**
 * Reads the script's reply: five integers per policy, then the Redis time. A `'late'` reply (the
 * script ran after the call's deadline and wrote nothing) is `STORE_TIMEOUT`; anything else
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
 */
export function decodeScriptReply(reply: unknown, policyCount: number): ScriptReply {
  if (Array.isArray(reply) && reply.length === 2 && String(reply[0]) === 'late') {
    throw new FloodgateError(
      'STORE_TIMEOUT',
      'the limit script ran after its deadline and charged nothing',
    );
  }
  if (!Array.isArray(reply) || reply.length !== policyCount * 5 + 1) {
    throw new FloodgateError('STORE_PROTOCOL', 'unexpected reply from the limit script');
  }
  const results: PolicyResult[] = [];
  for (let i = 0; i < policyCount * 5; i += 5) {
    results.push({
      allowed: Number(reply[i]) === 1,
      remaining: Number(reply[i + 1]),
      resetAfterMs: Number(reply[i + 2]),
      retryAfterMs: Number(reply[i + 3]),
      delayMs: Number(reply[i + 4]),
    });
  }
  return { results, time: Number(reply[policyCount * 5]) };
}
