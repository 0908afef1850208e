-- fixedWindow: count per epoch-aligned window; state "windowStart:count".
POLICIES.fixedWindow = function(key, limit, w, _, t, cost)
  local s = load_state(key)
  local now = t
  if s and s[1] > now then
    now = s[1]
  end
  -- Durations count from the caller's clock (see common.lua: shift).
  local shift = now - t
  local start = now - (now % w)
  local count = 0
  if s and s[1] == start then
    count = s[2]
  end
  local finish = start + w - now
  local reset = 0
  if count > 0 then
    reset = finish + shift
  end
  if count + cost > limit then
    return false, limit - count, reset, finish + shift, 0
  end
  local ttl = finish + shift
  local commit = function()
    save_state(key, ttl, start, count + cost)
  end
  return true, limit - count, reset, 0, 0, commit, limit - count - cost, ttl
end
