-- The composition (compose.ts is its reference): every policy of one identity at one instant;
-- charge all or none. A script is assembled per combination of policy kinds (redis/assemble.ts):
-- this prelude, then per policy its fragment's @eval inside `do ... end` (key = KEYS[i], parameters
-- from ARGV), writing its results into ok<i>, rem<i>, rst<i>, rty<i>, dly<i>, nrem<i>, ttl<i> and
-- what to write into wa<i>, wb<i>, ws<i>; then, when every policy admits and mode is 'limit',
-- each fragment's @write; then the reply.
-- KEYS: one per policy, then one block key per blocking policy (blockFor). ARGV: mode ('limit' |
-- 'peek' | 'refund'), cost, now ('' = Redis TIME), deadline (Redis time in ms from which the
-- caller may have given up; '' = none), then per policy the integer parameters its fragment
-- names in @params (the first of Policy.params), then per blocking policy its blockFor in ms.
-- Mode 'refund' runs each fragment's @refund right after its @eval, on the state @eval read, and
-- writes nothing else (limiter.refund; compose.ts evaluateAll is its reference).
-- Penalties: a block key holds the ms until which its policy blocks the identity. While one runs
-- (until > t), its policy is denied with remaining 0 and retry and reset of at least the time
-- left, so nothing is charged; otherwise a 'limit' call that a blocking policy denies sets that
-- policy's block to t + blockFor (PX blockFor), in the same run. Scripts of policies without
-- blockFor hold no block code: same keys, same commands as before penalties existed.
-- Reply: per policy allowed (0/1), remaining, reset ms, retry ms, delay ms; then the Redis TIME
-- read in ms (0 when not read). TIME is read only for the server clock or a deadline. A call at
-- or past its deadline writes nothing and replies { 'late', time }: its caller has answered
-- without it, so charging it would charge twice.
-- Writes: fixedWindow, slidingWindow and quota on the server clock SET their key and PEXPIREAT
-- it at the end of the window (period) its state is for, and a later write in the same window
-- raises the count with INCRBY, which keeps that expiry: one cheap command instead of SET … PX
-- with two numbers to format. Every other write, and every write on the client clock, is
-- SET … PX.
-- Numbers given to redis.call reach Redis as their exact digits (%.17g before Redis 7.2, which
-- costs 7.0 about 2k instructions a number in snprintf; shortest round-trip digits since), so
-- int-encoded state goes out as a number; `..` and tostring print only 14 significant digits,
-- so strings are built with one fmt('%d:%d', …) of the integers they hold (every number a state
-- string holds is an integer below 2^53, whose %d digits are its %.17g digits): an integer
-- conversion costs a fraction of a %.17g one (printf's floating-point path, about 2.7k
-- instructions a number on glibc), and one fmt call costs less than a fmt per number and `..`.
-- @prelude
local fmt = string.format
local mode = ARGV[1]
local cost = tonumber(ARGV[2])
if mode == 'peek' then
  cost = 1
end
local time = 0
if ARGV[3] == '' or ARGV[4] ~= '' then
  local clock = redis.call('TIME')
  -- us - us % 1000: its whole ms without a call to math.floor (common.lua floor_div says why).
  local us = tonumber(clock[2])
  time = tonumber(clock[1]) * 1000 + (us - us % 1000) / 1000
  -- At the deadline's own ms the caller may have given up already (time is floored to the ms):
  -- that ms refuses too.
  if ARGV[4] ~= '' and time >= tonumber(ARGV[4]) then
    return { 'late', time }
  end
end
local t = time
-- On the server clock a window's key expires at an absolute Redis time (PEXPIREAT): the end of
-- the state it holds, to the millisecond, however long after TIME the write runs.
local server = ARGV[3] == ''
-- On the client clock a key's PX counts from this run on Redis, its state from the caller's
-- time: a call of the same window that spent longer on its way here (up to its own deadline)
-- would find the key expired and count as the window's first. So every PX the script sets is
-- longer by what this call's caller still waits (deadline - TIME): the key then outlives every
-- call made before its state's end and not yet at its deadline (docs/stores.md, Clock modes).
-- 0 on the server clock (PX and state count on one clock) and for a call without a deadline.
local grace = 0
if not server then
  t = tonumber(ARGV[3])
  if ARGV[4] ~= '' then
    grace = tonumber(ARGV[4]) - time
  end
end
