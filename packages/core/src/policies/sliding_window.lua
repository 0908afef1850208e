-- slidingWindow (sliding_window.ts is its reference): two counters; admits iff
-- prev * (w - elapsed) + (cur + cost) * w <= limit * w. State: window k (start = k * w), current
-- and previous counts, stored as the integer (k * radix + cur) * radix + prev, which Redis keeps
-- int-encoded; where a count reaches radix or the integer would pass 2^53, as the string
-- "start:cur:prev". The radix is a power of two that depends on w alone (sliding_window.ts
-- slidingRadix), never on the limit: the counts mean the same under any limit.
-- @params limit w
-- @eval
-- radix = 2^floor((53 - e) / 2), 2^e the least power of two above the last window number before
-- 2^42 ms (the year 2109): k * radix^2 + cur * radix + prev < 2^53 for every window until then,
-- and every quotient of the decode is exact. q - q % 1 is math.floor(q) (common.lua floor_div
-- says why it is written so).
local radix = 4398046511104 / w
local _, e = math.frexp(radix - radix % 1)
e = (53 - e) / 2
radix = math.ldexp(1, e - e % 1)
local raw = redis.call('GET', key)
local s1, s2, s3
if raw then
  local v = tonumber(raw)
  if v then
    local q = v / radix
    q = q - q % 1
    s3 = v - q * radix
    local k = q / radix
    k = k - k % 1
    s2 = q - k * radix
    s1 = k * w
  else
    local a, b, c = string.match(raw, '^(%d+):(%d+):(%d+)$')
    s1, s2, s3 = tonumber(a), tonumber(b), tonumber(c)
  end
end
local now = t
if s1 and s1 > now then
  now = s1
end
local shift = now - t
local start = now - now % w
local elapsed = now - start
local cur, prev = 0, 0
if s1 == start then
  cur = s2
  prev = s3
elseif s1 == start - w then
  prev = s2
end
local weighted = prev * (w - elapsed)
local remaining = floor_div(limit * w - weighted, w)
remaining = math.max(0, remaining - cur)
rem@ = remaining
if cur > 0 then
  rst@ = start + 2 * w - now + shift
elseif prev > 0 then
  rst@ = start + w - now + shift
end
if weighted + (cur + cost) * w <= limit * w--[[costs: or force]] then
  ok@ = true
  nrem@ = remaining - cost
  ttl@ = start + 2 * w - now + shift
  local v = (start / w * radix + cur + cost) * radix + prev
  if cur + cost < radix and prev < radix and v < 9007199254740992 then
    wa@ = v
    -- The same window's key, int-encoded (counts below radix, v - cost * radix < 2^53): INCRBY
    -- makes v and keeps the expiry this window's first write set, at the end of the next window.
    if server and shift == 0 and s1 == start then
      ws@ = cost * radix
    end
  else
    wa@ = fmt('%d:%d:%d', start, cur + cost, prev)
  end
else
  local retry
  if cur + cost <= limit then
    retry = w - elapsed - floor_div((limit - cur - cost) * w, prev)
  else
    local into = 0
    if cur > 0 then
      into = math.max(0, w - floor_div((limit - cost) * w, cur))
    end
    retry = w - elapsed + into
  end
  rty@ = retry + shift
end
-- @refund
-- limiter.refund (slidingWindowRefund is its reference): the current window's count goes down by
-- cost, not below 0; the previous window's count gives nothing back.
if s1 == start and cur > 0 then
  local left = math.max(0, cur - cost)
  local px = start + 2 * w - now + shift
  local v = (start / w * radix + left) * radix + prev
  if left >= radix or prev >= radix or v >= 9007199254740992 then
    v = fmt('%d:%d:%d', start, left, prev)
  end
  if server then
    redis.call('SET', key, v)
    redis.call('PEXPIREAT', key, t + px)
  else
    redis.call('SET', key, v, 'PX', px + grace)
  end
end
-- @write window
