import { createHash } from 'node:crypto';
import { FloodgateError } from './errors.js';
import { LIMIT_SCRIPT } from './lua.generated.js';
import type { PolicyResult, StoreCall } from './store.js';

/** SHA-1 of `LIMIT_SCRIPT`, for `EVALSHA`. */
export const LIMIT_SCRIPT_SHA1: string = createHash('sha1').update(LIMIT_SCRIPT).digest('hex');

/**
 * `ARGV` for `LIMIT_SCRIPT` (its `KEYS` are `call.keys`). `now` in integer ms uses the caller's
 * clock; undefined lets the script read Redis `TIME`.
 */
export function encodeScriptArgs(call: StoreCall, now?: number): string[] {
  const args = [call.mode, String(call.cost), now === undefined ? '' : String(now)];
  for (const p of call.policies)
    args.push(p.kind, String(p.params[0]), String(p.params[1]), String(p.params[2]));
  return args;
}

/** Reads the script's reply: five integers per policy. Anything else is a protocol error. */
export function decodeScriptReply(reply: unknown, policyCount: number): PolicyResult[] {
  if (!Array.isArray(reply) || reply.length !== policyCount * 5) {
    throw new FloodgateError('STORE_PROTOCOL', 'unexpected reply from the limit script');
  }
  const results: PolicyResult[] = [];
  for (let i = 0; i < reply.length; i += 5) {
    results.push({
      allowed: Number(reply[i]) === 1,
      remaining: Number(reply[i + 1]),
      resetAfterMs: Number(reply[i + 2]),
      retryAfterMs: Number(reply[i + 3]),
      delayMs: Number(reply[i + 4]),
    });
  }
  return results;
}
