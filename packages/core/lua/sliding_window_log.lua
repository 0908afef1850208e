-- slidingWindowLog: a sorted set, one member per admitted request (per ms: requests of one ms
-- share a member), scored by its ms. The member is "<before>:<cost>", `before` being the units
-- this key admitted before it, so the units of a range of entries are two lookups, never a sum.
-- Every command below is O(log n), bar trimming (each entry is trimmed once).
local function log_entry(member)
  local b, c = string.match(member, '^(%d+):(%d+)$')
  return tonumber(b), tonumber(c)
end

POLICIES.slidingWindowLog = function(key, limit, w, _, t, cost)
  local now = t
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  local newest_ms, total = nil, 0
  if newest[2] then
    newest_ms = tonumber(newest[2])
    local b, c = log_entry(newest[1])
    total = b + c
    if newest_ms > now then
      now = newest_ms
    end
  end
  local shift = now - t
  local low = '(' .. fmt(now - w)
  local first = redis.call('ZRANGEBYSCORE', key, low, '+inf', 'LIMIT', 0, 1)
  local count, base = 0, 0
  if first[1] then
    base = log_entry(first[1])
    count = total - base
  end
  local reset = 0
  if count > 0 then
    reset = newest_ms + w - now + shift
  end
  if count + cost > limit then
    -- Binary search over ranks for the entry holding the k-th oldest unit in the window.
    local target = base + count + cost - limit
    local lo = redis.call('ZCOUNT', key, '-inf', fmt(now - w))
    local hi = redis.call('ZCARD', key) - 1
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      local b, c = log_entry(redis.call('ZRANGE', key, mid, mid)[1])
      if b + c >= target then
        hi = mid
      else
        lo = mid + 1
      end
    end
    local hit = redis.call('ZRANGE', key, lo, lo, 'WITHSCORES')
    return false, limit - count, reset, tonumber(hit[2]) + w - now + shift, 0
  end
  local commit = function()
    redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now - w))
    if newest_ms == now then
      local b, c = log_entry(newest[1])
      redis.call('ZREM', key, newest[1])
      redis.call('ZADD', key, fmt(now), fmt(b) .. ':' .. fmt(c + cost))
    else
      redis.call('ZADD', key, fmt(now), fmt(total) .. ':' .. fmt(cost))
    end
    redis.call('PEXPIRE', key, w + shift)
  end
  return true, limit - count, reset, 0, 0, commit, limit - count - cost, w + shift
end
