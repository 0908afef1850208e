-- fixedWindow (fixed_window.ts is its reference): a count per epoch-aligned window. State:
-- window k (start = k * w) and count, stored as the integer k * (limit + 1) + count, which Redis
-- keeps int-encoded; where that would pass 2^53, as the string "start:count".
-- @params limit w
-- @eval
local raw = redis.call('GET', key)
local s1, s2
if raw then
  local v = tonumber(raw)
  if v then
    -- Exact: v < 2^53 and count < limit + 1, so the quotient never rounds up to k + 1.
    -- q - q % 1 is math.floor(q) (common.lua floor_div says why it is written so).
    local k = v / (limit + 1)
    k = k - k % 1
    s1 = k * w
    s2 = v - k * (limit + 1)
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
rem@ = limit - count
if count > 0 then
  rst@ = finish + shift
end
if count + cost > limit then
  rty@ = finish + shift
else
  ok@ = true
  nrem@ = limit - count - cost
  ttl@ = finish + shift
  local v = start / w * (limit + 1) + count + cost
  if v < 9007199254740992 then
    -- A number goes to Redis as its exact decimal digits: stored int-encoded.
    wa@ = v
    -- The same window's key, already int-encoded (its value is v - cost < 2^53): INCRBY cost
    -- makes v, and keeps the expiry at the window's end that this window's first write set.
    if server and shift == 0 and s1 == start then
      ws@ = cost
    end
  else
    wa@ = fmt('%.17g', start) .. ':' .. fmt('%.17g', count + cost)
  end
end
-- @refund
-- limiter.refund (fixedWindowRefund is its reference): the current window's count goes down by
-- cost, not below 0; a count of an earlier window gives nothing back.
if s1 == start and count > 0 then
  local left = math.max(0, count - cost)
  local v = start / w * (limit + 1) + left
  if v >= 9007199254740992 then
    v = fmt('%.17g', start) .. ':' .. fmt('%.17g', left)
  end
  if server then
    redis.call('SET', key, v)
    redis.call('PEXPIREAT', key, t + finish + shift)
  else
    redis.call('SET', key, v, 'PX', finish + shift)
  end
end
-- @write window
