-- slidingWindow: two counters; admits iff prev*(w-elapsed) + (cur+cost)*w <= limit*w.
-- State "windowStart:current:previous".
POLICIES.slidingWindow = function(key, limit, w, _, t, cost)
  local s = load_state(key)
  local now = t
  if s and s[1] > now then
    now = s[1]
  end
  local shift = now - t
  local start = now - (now % w)
  local elapsed = now - start
  local cur, prev = 0, 0
  if s then
    if s[1] == start then
      cur = s[2]
      prev = s[3]
    elseif s[1] == start - w then
      prev = s[2]
    end
  end
  local weighted = prev * (w - elapsed)
  local remaining = math.max(0, floor_div(limit * w - weighted, w) - cur)
  local reset = 0
  if cur > 0 then
    reset = start + 2 * w - now + shift
  elseif prev > 0 then
    reset = start + w - now + shift
  end
  if weighted + (cur + cost) * w <= limit * w then
    local ttl = start + 2 * w - now + shift
    local commit = function()
      save_state(key, ttl, start, cur + cost, prev)
    end
    return true, remaining, reset, 0, 0, commit, remaining - cost, ttl
  end
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
  return false, remaining, reset, retry + shift, 0
end
