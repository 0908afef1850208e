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
local deadline = ARGV[7] ~= nil and ARGV[7] ~= '' and tonumber(ARGV[7]) or nil
-- TIME, read for the server clock or a deadline: the reply carries it (0 when not read).
local time = 0
if now < 0 or deadline then
  local t = redis.call('TIME')
  time = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  -- At or past its deadline the caller has answered without this call (from the deadline's own
  -- ms: TIME is floored to the ms): grant nothing, or a slot would be held by nobody.
  if deadline and time >= deadline then return { -1, 0, 0, time } end
  if now < 0 then now = time end
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
    return { 0, free, at[2] and (tonumber(at[2]) - now) or 0, time }
  end
  each_chunk(true, now + ms, function(args) redis.call('ZADD', key, unpack(args)) end)
  keep()
  return { 1, limit - held - cost, 0, time }
end
if op == 'release' then
  local removed = 0
  each_chunk(false, 0, function(args) removed = removed + redis.call('ZREM', key, unpack(args)) end)
  return { removed > 0 and 1 or 0, 0, 0, time }
end
-- extend: only a live lease; XX never brings back one that is gone.
if not redis.call('ZSCORE', key, id) then return { 0, 0, 0, time } end
each_chunk(true, now + ms, function(args) redis.call('ZADD', key, 'XX', unpack(args)) end)
keep()
return { 1, 0, 0, time }
`;

/**
 * The lease script: its text (for `EVAL`) and SHA-1 (for `EVALSHA`). KEYS: the lease key.
 * ARGV: op (`acquire`, `release`, `extend`), lease id, cost, now in ms (-1: Redis `TIME`),
 * leaseMs, limit, and for an acquire its deadline in Redis time (`''`: none). Reply: allowed or
 * done (1/0; -1: the deadline had passed and nothing was written), remaining, retryAfterMs, and
 * the Redis `TIME` it read (0 when it read none).
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
  deadline?: number,
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
    deadline === undefined ? '' : String(deadline),
  ];
  const reply = await runner.run(lease.key, args, LEASE_SCRIPT);
  const received = performance.now();
  if (!Array.isArray(reply) || reply.length !== 4) {
    throw new FloodgateError('STORE_PROTOCOL', 'unexpected reply to the lease script');
  }
  // Only a time Redis read: with `clock: 'client'` the caller's own clock is no sample of it.
  const time = Number(reply[3]);
  if (time > 0) runner.offset.sample(time, received);
  if (Number(reply[0]) === -1) {
    throw new FloodgateError(
      'STORE_TIMEOUT',
      'the lease script ran at or after its deadline and granted nothing',
    );
  }
  return {
    allowed: Number(reply[0]) === 1,
    remaining: Number(reply[1]),
    retryAfterMs: Number(reply[2]),
  };
}

/**
 * The three lease calls of a `RedisStore`, given how it reads its clock. An acquire with a
 * deadline sends it on Redis's clock: the first one asks `TIME` once, as the limit calls do.
 */
export function leaseCalls(runner: ScriptRunner, clock: () => number | undefined) {
  let probe: Promise<void> | undefined;
  /** One `TIME` for every acquire waiting to know Redis's clock; tried again after a failure. */
  const learnTime = (key: string): Promise<void> => {
    probe ??= runner
      .command(key, 'TIME', [])
      .then((reply) => {
        const received = performance.now();
        if (!Array.isArray(reply) || reply.length !== 2) {
          throw new FloodgateError('STORE_PROTOCOL', 'unexpected reply to TIME');
        }
        const ms = Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000);
        runner.offset.sample(ms, received);
      })
      .finally(() => {
        probe = undefined;
      });
    return probe;
  };
  return {
    async acquire(r: LeaseRequest): Promise<LeaseGrant> {
      const now = clock();
      if (r.deadline === undefined) return runLease(runner, 'acquire', r, now, r.leaseMs, r.limit);
      if (!runner.offset.known) await learnTime(r.key);
      const deadline = runner.offset.toRedis(r.deadline);
      return runLease(runner, 'acquire', r, now, r.leaseMs, r.limit, deadline);
    },
    release: async (l: LeaseRef) => (await runLease(runner, 'release', l, clock())).allowed,
    extend: async (l: LeaseRef, ms: number) =>
      (await runLease(runner, 'extend', l, clock(), ms)).allowed,
  };
}
