-- fixedWindow (fixed_window.ts is its reference): a count per epoch-aligned window. State:
-- window k (start = k * w) and count, stored as the integer k * radix + count, which Redis keeps
-- int-encoded; where count >= radix or that would pass 2^53, as the string "start:count". The
-- radix is a power of two that depends on w alone (fixed_window.ts windowRadix), never on the
-- limit: the count a key holds means the same under any limit (docs/algorithms.md, "Keys, and a
-- limit that changes").
-- @params limit w
-- @eval
-- radix = 2^53 / 2^e, 2^e the least power of two above the last window number before 2^42 ms
-- (the year 2109): k * radix + count < 2^53 for every window until then. A power of two, so
-- v / radix is exact and the decode needs no correction. q - q % 1 is math.floor(q) (common.lua
-- floor_div says why it is written so).
local radix = 4398046511104 / w
local _, e = math.frexp(radix - radix % 1)
radix = math.ldexp(1, 53 - e)
local raw = redis.call('GET', key)
local s1, s2
if raw then
  local v = tonumber(raw)
  if v then
    local k = v / radix
    k = k - k % 1
    s1 = k * w
    s2 = v - k * radix
  else
    local a, b = string.match(raw, '^(%d+):(%d+)$')
    s1, s2 = tonumber(a), tonumber(b)
  end
end
-- A caller behind the key's time is evaluated at the key's time; durations still count from
-- its own clock (shift), as common.ts `late` says.
local now = t
if s1 and s1 > now then
  now = s1
end
local shift = now - t
local start = now - now % w
local count = 0
if s1 == start then
  count = s2
end
local finish = start + w - now
-- A count above a lowered limit leaves nothing (fixed_window.ts says why).
rem@ = math.max(0, limit - count)
if count > 0 then
  rst@ = finish + shift
end
if count + cost > limit--[[costs: and not force]] then
  rty@ = finish + shift
else
  ok@ = true
  nrem@ = limit - count - cost
  ttl@ = finish + shift
  local v = start / w * radix + count + cost
  if count + cost < radix and v < 9007199254740992 then
    -- A number goes to Redis as its exact decimal digits: stored int-encoded.
    wa@ = v
    -- The same window's key, already int-encoded (count < radix, its value v - cost < 2^53):
    -- INCRBY cost makes v, and keeps the expiry at the window's end that this window's first
    -- write set.
    if server and shift == 0 and s1 == start then
      ws@ = cost
    end
  else
    wa@ = fmt('%d:%d', start, count + cost)
  end
end
-- @refund
-- limiter.refund (fixedWindowRefund is its reference): the current window's count goes down by
-- cost, not below 0; a count of an earlier window gives nothing back.
if s1 == start and count > 0 then
  local left = math.max(0, count - cost)
  local v = start / w * radix + left
  if left >= radix or v >= 9007199254740992 then
    v = fmt('%d:%d', start, left)
  end
  if server then
    redis.call('SET', key, v)
    redis.call('PEXPIREAT', key, t + finish + shift)
  else
    redis.call('SET', key, v, 'PX', finish + shift + grace)
  end
end
-- @write window
