import { createHash } from 'node:crypto';
import { FloodgateError } from './errors.js';
import { LIMIT_SCRIPT } from './lua.generated.js';
import type { PolicyResult, StoreCall } from './store.js';

/** SHA-1 of `LIMIT_SCRIPT`, for `EVALSHA`. */
export const LIMIT_SCRIPT_SHA1: string = createHash('sha1').update(LIMIT_SCRIPT).digest('hex');

/**
 * `ARGV` for `LIMIT_SCRIPT` (its `KEYS` are `call.keys`). `now` in integer ms uses the caller's
 * clock; undefined lets the script read Redis `TIME`. `deadline` is a Redis `TIME` in ms after
 * which the script must not charge (its caller has given up); undefined for none.
 */
export function encodeScriptArgs(call: StoreCall, now?: number, deadline?: number): string[] {
  const args = [
    call.mode,
    String(call.cost),
    now === undefined ? '' : String(now),
    deadline === undefined ? '' : String(deadline),
  ];
  for (const p of call.policies)
    args.push(p.kind, String(p.params[0]), String(p.params[1]), String(p.params[2]));
  return args;
}

/** What one run of the limit script said. */
export interface ScriptReply {
  readonly results: PolicyResult[];
  /** Redis `TIME` in ms as the script read it; 0 when it did not read it (client clock, no deadline). */
  readonly time: number;
}

/**
 * Reads the script's reply: five integers per policy, then the Redis time. A `'late'` reply (the
 * script ran after the call's deadline and wrote nothing) is `STORE_TIMEOUT`; anything else
 * unexpected is `STORE_PROTOCOL`.
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
