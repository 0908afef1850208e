-- tokenBucket (token_bucket.ts is its reference), and leakyBucket with SHAPING: GCRA over one
-- timestamp, the theoretical arrival time (tat), in ms plus ticks below one ms. A unit of cost
-- is per_unit ticks, a ms is per_ms ticks; capacity * per_unit ticks is how far ahead of now tat
-- may run. Stored as the integer tat_ms * per_ms + ticks, which Redis keeps int-encoded; where
-- that would pass 2^53, as the string "tat_ms:ticks".
-- @params capacity per_unit per_ms
-- @eval
local raw = redis.call('GET', key)
local s1, s2
if raw then
  local v = tonumber(raw)
  if v then
    -- Exact: v < 2^53 and ticks < per_ms, so the quotient never rounds up.
    -- s1 - s1 % 1 is math.floor(s1) (common.lua floor_div says why it is written so).
    s1 = v / per_ms
    s1 = s1 - s1 % 1
    s2 = v - s1 * per_ms
  else
    local a, b = string.match(raw, '^(%d+):(%d+)$')
    s1, s2 = tonumber(a), tonumber(b)
  end
end
local tau = capacity * per_unit
local now = t
local ahead = 0
if s1 then
  local max_ahead = ceil_div(tau, per_ms)
  if s1 - now > max_ahead then
    now = s1 - max_ahead
  end
  ahead = math.max(0, (s1 - now) * per_ms + s2)
end
local shift = now - t
local reset = ceil_div(ahead, per_ms)
rem@ = math.max(0, floor_div(tau - ahead, per_unit))
-- A bucket evaluated at its key's time (shift > 0) is full: it never admits, so only the
-- denial's durations need shifting.
if reset > 0 then
  rst@ = reset + shift
end
local after = ahead + cost * per_unit
if after > tau then
  rty@ = ceil_div(after - tau, per_ms) + shift
else
  ok@ = true
  nrem@ = rem@ - cost
  ttl@ = ceil_div(after, per_ms) + shift
  if SHAPING then
    dly@ = reset
  end
  local whole = floor_div(after, per_ms)
  local tat, ticks = now + whole, after - whole * per_ms
  local v = tat * per_ms + ticks
  if v < 9007199254740992 then
    wa@ = v
  else
    wa@ = fmt('%.17g', tat) .. ':' .. fmt('%.17g', ticks)
  end
end
-- @refund
-- limiter.refund (bucketRefund is its reference): tat moves back by cost units, never before
-- now; a bucket back to full is deleted.
if ahead > 0 then
  local back = math.max(0, ahead - cost * per_unit)
  if back == 0 then
    redis.call('DEL', key)
  else
    local whole = floor_div(back, per_ms)
    local tat, ticks = now + whole, back - whole * per_ms
    local ttl = ceil_div(back, per_ms) + shift
    local v = tat * per_ms + ticks
    if v < 9007199254740992 then
      redis.call('SET', key, v, 'PX', ttl)
    else
      redis.call('SET', key, fmt('%.17g', tat) .. ':' .. fmt('%.17g', ticks), 'PX', ttl)
    end
  end
end
-- @write
redis.call('SET', key, wa@, 'PX', ttl@)
