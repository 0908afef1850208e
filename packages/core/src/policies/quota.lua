-- quota (quota.ts is its reference): a count per calendar period. A period's boundaries are
-- local midnights in an IANA zone, which Lua cannot compute: the caller sends the ends of three
-- periods around its own clock (b0 <= its now < b1 < b2, from Intl), and the period is picked
-- here by t, Redis TIME on the server clock (quotaPeriodEnd). Past b2 the clocks differ by more
-- than a period: the call fails rather than count in a period whose end it cannot know.
-- State: the period's end and its count, stored as the integer (end / 60000) * 2^26 + count (a
-- local midnight is a whole minute; Redis keeps it int-encoded), or where that is not so, the
-- count reaches 2^26 or the integer would pass 2^53, as the string "end:count". 2^26 is
-- fixedWindow's radix for a minute (fixed_window.lua): ends in minutes stay below 2^27 until
-- 2225, and the count means the same under any limit.
-- @params limit b0 b1 b2
-- @eval
local finish
if t >= b2 then
  error('quota: Redis TIME is past the periods this host sent; the clocks differ by more than a period')
elseif t >= b1 then
  finish = b2
elseif t >= b0 then
  finish = b1
else
  finish = b0
end
local raw = redis.call('GET', key)
local s1, s2
if raw then
  local v = tonumber(raw)
  if v then
    -- Exact: a power of two divides without rounding. q - q % 1 is math.floor(q) (common.lua
    -- floor_div says why it is written so).
    local k = v / 67108864
    k = k - k % 1
    s1 = k * 60000
    s2 = v - k * 67108864
  else
    local a, b = string.match(raw, '^(%d+):(%d+)$')
    s1, s2 = tonumber(a), tonumber(b)
  end
end
-- The key's period is this one, or a later one that a caller whose clock is ahead wrote: time
-- never runs backward for a key. Every wait runs from this caller's t to that period's end.
local count = 0
if s1 and s1 >= finish then
  finish = s1
  count = s2
end
local wait = finish - t
-- A count above a lowered limit leaves nothing until the period ends.
rem@ = math.max(0, limit - count)
if count > 0 then
  rst@ = wait
end
if count + cost > limit--[[costs: and not force]] then
  rty@ = wait
else
  ok@ = true
  nrem@ = limit - count - cost
  ttl@ = wait
  local v = finish / 60000 * 67108864 + count + cost
  if finish % 60000 == 0 and count + cost < 67108864 and v < 9007199254740992 then
    wa@ = v
    -- This period's key, int-encoded: INCRBY cost makes v and keeps its expiry, the period's end.
    if server and s1 == finish then
      ws@ = cost
    end
  else
    wa@ = fmt('%d:%d', finish, count + cost)
  end
end
-- @refund
-- limiter.refund (quotaRefund is its reference): the current period's count goes down by cost,
-- not below 0; a count of an earlier period gives nothing back.
if count > 0 then
  local left = math.max(0, count - cost)
  local v = finish / 60000 * 67108864 + left
  if finish % 60000 ~= 0 or left >= 67108864 or v >= 9007199254740992 then
    v = fmt('%d:%d', finish, left)
  end
  if server then
    redis.call('SET', key, v)
    redis.call('PEXPIREAT', key, finish)
  else
    redis.call('SET', key, v, 'PX', wait + grace)
  end
end
-- @write window
