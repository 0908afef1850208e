-- tokenBucket and leakyBucket: GCRA over one stored timestamp, the theoretical arrival time,
-- as "ms:ticks". A unit of cost is per_unit ticks, a ms is per_ms ticks; capacity * per_unit
-- ticks is how far ahead of now the arrival time may run.
local function bucket(shaping, key, capacity, per_unit, per_ms, now, cost)
  local s = load_state(key)
  local tau = capacity * per_unit
  local ahead = 0
  if s then
    local max_ahead = ceil_div(tau, per_ms)
    if s[1] - now > max_ahead then
      now = s[1] - max_ahead
    end
    ahead = math.max(0, (s[1] - now) * per_ms + s[2])
  end
  local remaining = math.max(0, floor_div(tau - ahead, per_unit))
  local reset = ceil_div(ahead, per_ms)
  local after = ahead + cost * per_unit
  if after > tau then
    return false, remaining, reset, ceil_div(after - tau, per_ms), 0
  end
  local whole = floor_div(after, per_ms)
  local ttl = ceil_div(after, per_ms)
  local delay = 0
  if shaping then
    delay = reset
  end
  local commit = function()
    save_state(key, ttl, now + whole, after - whole * per_ms)
  end
  return true, remaining, reset, 0, delay, commit, remaining - cost, ttl
end

POLICIES.tokenBucket = function(key, capacity, per_unit, per_ms, now, cost)
  return bucket(false, key, capacity, per_unit, per_ms, now, cost)
end
