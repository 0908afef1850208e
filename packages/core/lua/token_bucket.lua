-- tokenBucket and leakyBucket: GCRA over one stored timestamp, the theoretical arrival time,
-- as "ms:ticks". A unit of cost is per_unit ticks, a ms is per_ms ticks; capacity * per_unit
-- ticks is how far ahead of now the arrival time may run.
local function bucket(shaping, key, capacity, per_unit, per_ms, t, cost)
  local s = load_state(key)
  local tau = capacity * per_unit
  local now = t
  local ahead = 0
  if s then
    local max_ahead = ceil_div(tau, per_ms)
    if s[1] - now > max_ahead then
      now = s[1] - max_ahead
    end
    ahead = math.max(0, (s[1] - now) * per_ms + s[2])
  end
  local shift = now - t
  local remaining = math.max(0, floor_div(tau - ahead, per_unit))
  local reset = ceil_div(ahead, per_ms)
  local after = ahead + cost * per_unit
  -- A bucket evaluated at its key's time (shift > 0) is full: it never admits, so only the
  -- denial's durations need shifting.
  local shifted_reset = reset
  if reset > 0 then
    shifted_reset = reset + shift
  end
  if after > tau then
    return false, remaining, shifted_reset, ceil_div(after - tau, per_ms) + shift, 0
  end
  local whole = floor_div(after, per_ms)
  local ttl = ceil_div(after, per_ms) + shift
  local delay = 0
  if shaping then
    delay = reset
  end
  local commit = function()
    save_state(key, ttl, now + whole, after - whole * per_ms)
  end
  return true, remaining, shifted_reset, 0, delay, commit, remaining - cost, ttl
end

POLICIES.tokenBucket = function(key, capacity, per_unit, per_ms, now, cost)
  return bucket(false, key, capacity, per_unit, per_ms, now, cost)
end
