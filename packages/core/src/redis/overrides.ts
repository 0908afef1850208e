// The override script (the store side of `limiter.override`, `OverrideStore`) and the two calls
// RedisStore makes with it. An override key holds "<until> <limit> <param>…"
// (override-state.ts), the string the limit script matches (assemble-overrides.ts).
import { FloodgateError } from '../errors.js';
import { sha1Hex } from '../hash.js';
import { decodeOverride, encodeOverride } from '../override-state.js';
import type { PolicyState } from '../policies/common.js';
import type { LimitScript } from './lua.js';
import type { ScriptRunner } from './runner.js';

// One script for both: the keys of one identity share a slot, so one EVALSHA sets (or reads)
// them all atomically on the node that owns them, with any client, cluster or not.
// On the server clock an override expires at its until on Redis's clock (PEXPIREAT), the clock
// the limit script compares it with. On the client clock it gets PX until − now: it expires when
// the caller's clock reaches until, which is when the limit script (given that clock) stops
// applying it, whatever Redis's own clock says.
const SOURCE = `-- Floodgate override script
local op, now = ARGV[1], ARGV[2]
if op == 'get' then
  local out = {}
  for i = 1, #KEYS do
    out[i] = redis.call('GET', KEYS[i]) or ''
  end
  return out
end
for i = 1, #KEYS do
  local v = ARGV[i + 2]
  local u = tonumber(string.match(v, '^%d+'))
  if not u or (now ~= '' and u <= tonumber(now)) then
    redis.call('DEL', KEYS[i])
  elseif now == '' then
    redis.call('SET', KEYS[i], v)
    redis.call('PEXPIREAT', KEYS[i], u)
  else
    redis.call('SET', KEYS[i], v, 'PX', u - tonumber(now))
  end
end
return 1
`;

/**
 * The override script: KEYS, one identity's override keys; ARGV: `get` or `set`, the client
 * clock's now in ms (`''` on the server clock), and for `set` each key's value (`''` deletes).
 * `get` answers each key's value, `''` for none.
 */
export const OVERRIDE_SCRIPT: LimitScript = { source: SOURCE, sha1: sha1Hex(SOURCE) };

/** RedisStore's `writeOverrides` and `readOverrides`, on its runner and clock. */
export function overrideCalls(runner: ScriptRunner, clock: () => number | undefined) {
  const run = (keys: readonly string[], op: string, now: number | undefined, values: string[]) => {
    const args = [
      OVERRIDE_SCRIPT.sha1,
      String(keys.length),
      ...keys,
      op,
      now === undefined ? '' : String(now),
      ...values,
    ];
    return runner.run(keys[0]!, args, OVERRIDE_SCRIPT);
  };
  return {
    async write(keys: readonly string[], states: readonly (PolicyState | null)[]): Promise<void> {
      if (keys.length === 0) return;
      const values = states.map((s) => (s === null ? '' : encodeOverride(s)));
      await run(keys, 'set', clock(), values);
    },
    async read(keys: readonly string[]): Promise<(PolicyState | undefined)[]> {
      if (keys.length === 0) return [];
      const now = clock();
      // The runner reports a failure as STORE_UNAVAILABLE, as it does a decision's.
      const reply = await run(keys, 'get', now, []);
      if (!Array.isArray(reply) || reply.length !== keys.length) {
        throw new FloodgateError('STORE_PROTOCOL', 'unexpected reply from the override script');
      }
      // On the client clock the key may outlive its until on Redis's clock: ended is ended.
      return reply.map((raw) => {
        const s = decodeOverride(raw);
        return s !== undefined && (now === undefined || s[0]! > now) ? s : undefined;
      });
    },
  };
}
