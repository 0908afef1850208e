-- slidingWindow (sliding_window.ts is its reference): two counters; admits iff
-- prev * (w - elapsed) + (cur + cost) * w <= limit * w. State: window k (start = k * w), current
-- and previous counts, stored as the integer (k * (limit + 1) + cur) * (limit + 1) + prev, which
-- Redis keeps int-encoded; where that would pass 2^53, as the string "start:cur:prev".
-- @params limit w
-- @eval
local raw = redis.call('GET', key)
local s1, s2, s3
if raw then
  local v = tonumber(raw)
  if v then
    -- Exact: v < 2^53 and each digit < limit + 1, so no quotient rounds up.
    -- q - q % 1 is math.floor(q) (common.lua floor_div says why it is written so).
    local q = v / (limit + 1)
    q = q - q % 1
    s3 = v - q * (limit + 1)
    local k = q / (limit + 1)
    k = k - k % 1
    s2 = q - k * (limit + 1)
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
if weighted + (cur + cost) * w <= limit * w then
  ok@ = true
  nrem@ = remaining - cost
  ttl@ = start + 2 * w - now + shift
  local v = (start / w * (limit + 1) + cur + cost) * (limit + 1) + prev
  if v < 9007199254740992 then
    wa@ = v
    -- The same window's key, int-encoded (v - cost * (limit + 1) < 2^53): INCRBY makes v and
    -- keeps the expiry this window's first write set, at the end of the next window.
    if server and shift == 0 and s1 == start then
      ws@ = cost * (limit + 1)
    end
  else
    wa@ = fmt('%.17g', start) .. ':' .. fmt('%.17g', cur + cost) .. ':' .. fmt('%.17g', prev)
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
  local v = (start / w * (limit + 1) + left) * (limit + 1) + prev
  if v >= 9007199254740992 then
    v = fmt('%.17g', start) .. ':' .. fmt('%.17g', left) .. ':' .. fmt('%.17g', prev)
  end
  if server then
    redis.call('SET', key, v)
    redis.call('PEXPIREAT', key, t + px)
  else
    redis.call('SET', key, v, 'PX', px)
  end
end
-- @write window
