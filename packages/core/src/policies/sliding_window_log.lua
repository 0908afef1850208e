-- slidingWindowLog (sliding_window_log.ts is its reference): a sorted set, one member per
-- admitted request (requests of one ms share a member), scored by its ms. The member is
-- "<before>:<cost>", `before` being the units this key admitted before it, so the units of a
-- range of entries take two lookups, never a sum. Every command is O(log n), bar trimming
-- (each entry is trimmed once), and n <= limit <= MAX_LOG_LIMIT.
-- @params limit w
-- @eval
local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
local newest_ms, total = nil, 0
local now = t
if newest[2] then
  newest_ms = tonumber(newest[2])
  local b, c = string.match(newest[1], '^(%d+):(%d+)$')
  total = tonumber(b) + tonumber(c)
  if newest_ms > now then
    now = newest_ms
  end
end
local shift = now - t
-- Numbers reach Redis as exact digits; only strings built with `..` need fmt ('%.17g').
local first = redis.call('ZRANGEBYSCORE', key, fmt('(%d', now - w), '+inf', 'LIMIT', 0, 1)
local count, base = 0, 0
if first[1] then
  base = tonumber(string.match(first[1], '^(%d+):'))
  count = total - base
end
-- A count above a lowered limit leaves nothing; the wait below still finds the k-th oldest unit.
rem@ = math.max(0, limit - count)
if count > 0 then
  rst@ = newest_ms + w - now + shift
end
if count + cost > limit--[[costs: and not force]] then
  -- Binary search over ranks for the entry holding the k-th oldest unit in the window.
  local target = base + count + cost - limit
  local lo = redis.call('ZCOUNT', key, '-inf', now - w)
  local hi = redis.call('ZCARD', key) - 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local b, c = string.match(redis.call('ZRANGE', key, mid, mid)[1], '^(%d+):(%d+)$')
    if tonumber(b) + tonumber(c) >= target then
      hi = mid
    else
      lo = mid + 1
    end
  end
  local hit = redis.call('ZRANGE', key, lo, lo, 'WITHSCORES')
  if hit[2] then
    rty@ = tonumber(hit[2]) + w - now + shift
  else
    -- No entry in the window: a cost above an overridden limit (no entry could hold its unit),
    -- denied for a window (docs/changing-limits.md: such a wait is not tight).
    rty@ = w + shift
  end
else
  ok@ = true
  nrem@ = limit - count - cost
  ttl@ = w + shift
  ws@ = now
  if newest_ms == now then
    -- Same ms as the newest entry: it grows instead of a new member.
    local b, c = string.match(newest[1], '^(%d+):(%d+)$')
    wa@ = newest[1]
    wb@ = fmt('%s:%d', b, tonumber(c) + cost)
  else
    wa@ = false
    wb@ = fmt('%d:%d', total, cost)
  end
end
-- @refund
-- limiter.refund (slidingWindowLogRefund is its reference): the cost OLDEST units in the window
-- leave; a partly emptied entry keeps its score and moves its `before` up, so the entries after
-- it stay consistent. Expired entries are dropped as an admission drops them.
if first[1] then
  local k = cost
  local live = redis.call('ZRANGEBYSCORE', key, fmt('(%d', now - w), '+inf', 'WITHSCORES', 'LIMIT', 0, cost)
  local i = 1
  while k > 0 and live[i] do
    local b, c = string.match(live[i], '^(%d+):(%d+)$')
    b, c = tonumber(b), tonumber(c)
    redis.call('ZREM', key, live[i])
    if c <= k then
      k = k - c
    else
      redis.call('ZADD', key, live[i + 1], fmt('%d:%d', b + k, c - k))
      k = 0
    end
    i = i + 2
  end
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now - w)
  local last = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if last[2] then
    redis.call('PEXPIRE', key, tonumber(last[2]) + w - now + shift + grace)
  end
end
-- @write
redis.call('ZREMRANGEBYSCORE', key, '-inf', ws@ - w)
if wa@ then
  redis.call('ZREM', key, wa@)
end
redis.call('ZADD', key, ws@, wb@)
redis.call('PEXPIRE', key, ttl@ + grace)
