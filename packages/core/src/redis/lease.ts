// The lease script (the concurrency limiter's store side) and the three calls RedisStore makes
// with it. One sorted set per identity: a member per slot a lease takes (`<id>` for the first,
// `<id>:<k>` for the others), scored by the lease's expiry in ms. Every call first drops the
// members whose expiry has passed, so ZCARD is the number of slots held by live leases.
import { FloodgateError } from '../errors.js';
import { sha1Hex } from '../hash.js';
import type { LeaseGrant, LeaseRef, LeaseRequest } from '../lease-types.js';
import type { LimitScript } from './lua.js';
import type { ScriptRunner } from './runner.js';

const SOURCE = `-- Floodgate lease script
local key = KEYS[1]
local op, id, cost = ARGV[1], ARGV[2], tonumber(ARGV[3])
local now, ms, limit = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
if now < 0 then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
-- A lease is live while its expiry is after now.
redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
-- The slots' members, in chunks: unpack has a bounded stack.
local function each_chunk(with_score, score, fn)
  local args = {}
  for k = 0, cost - 1 do
    if with_score then args[#args + 1] = score end
    args[#args + 1] = k == 0 and id or (id .. ':' .. k)
    if #args >= 1000 or k == cost - 1 then
      fn(args)
      args = {}
    end
  end
end
-- The key lives exactly as long as its latest lease.
local function keep()
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIRE', key, tonumber(last[2]) - now) end
end
if op == 'acquire' then
  local held = redis.call('ZCARD', key)
  if held + cost > limit then
    -- The slot whose expiry makes room for cost: the (held + cost - limit)-th to expire.
    local at = redis.call('ZRANGE', key, held + cost - limit - 1, held + cost - limit - 1, 'WITHSCORES')
    local free = limit - held
    if free < 0 then free = 0 end
    -- No such slot only for a cost above the limit, which the limiter refuses before calling.
    return { 0, free, at[2] and (tonumber(at[2]) - now) or 0, now }
  end
  each_chunk(true, now + ms, function(args) redis.call('ZADD', key, unpack(args)) end)
  keep()
  return { 1, limit - held - cost, 0, now }
end
if op == 'release' then
  local removed = 0
  each_chunk(false, 0, function(args) removed = removed + redis.call('ZREM', key, unpack(args)) end)
  return { removed > 0 and 1 or 0, 0, 0, now }
end
-- extend: only a live lease; XX never brings back one that is gone.
if not redis.call('ZSCORE', key, id) then return { 0, 0, 0, now } end
each_chunk(true, now + ms, function(args) redis.call('ZADD', key, 'XX', unpack(args)) end)
keep()
return { 1, 0, 0, now }
`;

/**
 * The lease script: its text (for `EVAL`) and SHA-1 (for `EVALSHA`). KEYS: the lease key.
 * ARGV: op (`acquire`, `release`, `extend`), lease id, cost, now in ms (-1: Redis `TIME`),
 * leaseMs, limit. Reply: allowed or done (1/0), remaining, retryAfterMs, the time it used.
 */
export const LEASE_SCRIPT: LimitScript = { source: SOURCE, sha1: sha1Hex(SOURCE) };

type Op = 'acquire' | 'release' | 'extend';

/** One run of the lease script: one `EVALSHA` (`EVAL` again after `NOSCRIPT`). */
export async function runLease(
  runner: ScriptRunner,
  op: Op,
  lease: LeaseRef,
  now: number | undefined,
  leaseMs = 0,
  limit = 0,
): Promise<LeaseGrant> {
  const args = [
    LEASE_SCRIPT.sha1,
    '1',
    lease.key,
    op,
    lease.id,
    String(lease.cost),
    String(now ?? -1),
    String(leaseMs),
    String(limit),
  ];
  const reply = await runner.run(lease.key, args, LEASE_SCRIPT);
  const received = performance.now();
  if (!Array.isArray(reply) || reply.length !== 4) {
    throw new FloodgateError('STORE_PROTOCOL', 'unexpected reply to the lease script');
  }
  const time = Number(reply[3]);
  if (time > 0) runner.offset.sample(time, received);
  return {
    allowed: Number(reply[0]) === 1,
    remaining: Number(reply[1]),
    retryAfterMs: Number(reply[2]),
  };
}

/** The three lease calls of a `RedisStore`, given how it reads its clock. */
export function leaseCalls(runner: ScriptRunner, clock: () => number | undefined) {
  return {
    acquire: (r: LeaseRequest) => runLease(runner, 'acquire', r, clock(), r.leaseMs, r.limit),
    release: async (l: LeaseRef) => (await runLease(runner, 'release', l, clock())).allowed,
    extend: async (l: LeaseRef, ms: number) =>
      (await runLease(runner, 'extend', l, clock(), ms)).allowed,
  };
}
