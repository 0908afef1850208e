-- slidingWindowLog: a sorted set with one member per admitted unit, scored by its ms.
-- Members are "<ms>:<n>"; all members of one ms are numbered 1..m, and expire together.
POLICIES.slidingWindowLog = function(key, limit, w, _, t, cost)
  local now = t
  local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  local newest_ms = nil
  if newest[2] then
    newest_ms = tonumber(newest[2])
    if newest_ms > now then
      now = newest_ms
    end
  end
  local shift = now - t
  local low = '(' .. fmt(now - w)
  local count = redis.call('ZCOUNT', key, low, '+inf')
  local reset = 0
  if count > 0 then
    reset = newest_ms + w - now + shift
  end
  if count + cost > limit then
    local kth = redis.call('ZRANGEBYSCORE', key, low, '+inf', 'WITHSCORES', 'LIMIT', count + cost - limit - 1, 1)
    return false, limit - count, reset, tonumber(kth[2]) + w - now + shift, 0
  end
  local commit = function()
    redis.call('ZREMRANGEBYSCORE', key, '-inf', fmt(now - w))
    local seq = 0
    if newest_ms == now then
      seq = redis.call('ZCOUNT', key, fmt(now), fmt(now))
    end
    local score = fmt(now)
    local args = {}
    for i = 1, cost do
      args[#args + 1] = score
      args[#args + 1] = score .. ':' .. fmt(seq + i)
      -- unpack() has a stack limit: add in chunks.
      if #args >= 1000 or i == cost then
        redis.call('ZADD', key, unpack(args))
        args = {}
      end
    end
    redis.call('PEXPIRE', key, w + shift)
  end
  return true, limit - count, reset, 0, 0, commit, limit - count - cost, w + shift
end
