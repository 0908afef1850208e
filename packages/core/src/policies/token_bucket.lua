-- tokenBucket (token_bucket.ts is its reference), and leakyBucket with SHAPING: GCRA over one
-- timestamp, the theoretical arrival time (tat), in ms plus ticks below one ms. A unit of cost
-- is per_unit ticks, a ms is per_ms ticks; capacity * per_unit ticks is how far ahead of now tat
-- may run. Stored as the integer tat_ms where the ticks are 0 (always, when the limit divides
-- the interval: per_ms = 1), which Redis keeps int-encoded; else as the string
-- "tat_ms:ticks:per_ms". Both read the same under any limit, burst or queue: the arrival time is
-- a time, and ticks of another rate (a limit changed since the write) are rescaled to this one,
-- rounded up (token_bucket.ts rescaledTicks), so how long until the bucket is full, or until the
-- queue's end, carries over. A token bucket whose burst is not its limit also stores its fill
-- time (burst in ticks), "tat_ms:ticks:per_ms:fill": a state read by a policy that fills slower
-- is that much further from full (token_bucket.ts fillShift); a short form stands for the fill
-- time at the limit (tau_i, its interval in ticks).
-- @params capacity per_unit per_ms tau_i
-- @eval
local raw = redis.call('GET', key)
local s1, s2, fill
if raw then
  local v = tonumber(raw)
  if v then
    s1, s2 = v, 0
  else
    local a, b, c, d = string.match(raw, '^(%d+):(%d+):(%d+):?(%d*)$')
    s1, s2, c = tonumber(a), tonumber(b), tonumber(c)
    -- The writer's fill time, in this rate's ticks rounded down (token_bucket.ts fillIn).
    fill = tonumber(d)
    if fill and c ~= per_ms then
      local x = fill * per_ms
      if x < 9007199254740992 then
        fill = floor_div(x, c)
      else
        local whole_ms = floor_div(fill, c)
        fill = whole_ms * per_ms
      end
    end
    if c ~= per_ms then
      local x = s2 * per_ms
      if x < 9007199254740992 then
        s2 = ceil_div(x, c)
      else
        s2 = per_ms
      end
      if s2 == per_ms then
        s1, s2 = s1 + 1, 0
      end
    end
  end
end
local tau = capacity * per_unit
local now = t
local ahead = 0
local extra = 0
if s1 then
  local max_ahead = ceil_div(tau, per_ms)
  if s1 - now > max_ahead then
    now = s1 - max_ahead
  end
  ahead = math.max(0, (s1 - now) * per_ms + s2)
  -- A token bucket reading a state written at a shorter fill time (token_bucket.ts fillShift).
  if not SHAPING and ahead > 0 then
    -- No fill time stored: the fill time at the limit (none sent, 0: the bucket's own).
    local w = fill
    if not w then
      w = tau_i
      if w == 0 then
        w = tau
      end
    end
    if tau > w then
      extra = tau - w
    end
  end
end
local shift = now - t
local held = ahead + extra
local reset = ceil_div(ahead, per_ms)
rem@ = math.max(0, floor_div(tau - held, per_unit))
-- A bucket evaluated at its key's time (shift > 0) is full: it never admits, so only the
-- denial's durations need shifting.
if reset > 0 then
  rst@ = reset + shift
end
local after = held + cost * per_unit
if --[[costs:not force and (]]after > tau--[[costs: or (cost == 0 and now > t))]] then
  local need = after - tau
  if extra > 0 and need >= ahead then
    rty@ = reset + shift
  else
    rty@ = ceil_div(need, per_ms) + shift
  end
else
  ok@ = true
  nrem@ = rem@ - cost
  ttl@ = ceil_div(after, per_ms) + shift
  if SHAPING then
    dly@ = reset
  end
  local whole = floor_div(after, per_ms)
  local tat, ticks = now + whole, after - whole * per_ms
  if SHAPING or tau == tau_i or tau_i == 0 then
    if ticks == 0 then
      wa@ = tat
    else
      wa@ = fmt('%d:%d:%d', tat, ticks, per_ms)
    end
  else
    wa@ = fmt('%d:%d:%d:%d', tat, ticks, per_ms, tau)
  end
end
-- @refund
-- limiter.refund (bucketRefund is its reference): tat moves back by cost units, never before
-- now; a bucket back to full is deleted. A state that carries its writer's fill time keeps it.
if ahead > 0 then
  local back = math.max(0, ahead - cost * per_unit)
  if back == 0 then
    redis.call('DEL', key)
  else
    local whole = floor_div(back, per_ms)
    local tat, ticks = now + whole, back - whole * per_ms
    local ttl = ceil_div(back, per_ms) + shift
    if fill then
      local kept = fill
      if kept < 1 then
        kept = 1
      end
      local v = fmt('%d:%d:%d:%d', tat, ticks, per_ms, kept)
      redis.call('SET', key, v, 'PX', ttl + grace)
    elseif ticks == 0 then
      redis.call('SET', key, tat, 'PX', ttl + grace)
    else
      local v = fmt('%d:%d:%d', tat, ticks, per_ms)
      redis.call('SET', key, v, 'PX', ttl + grace)
    end
  end
end
-- @write
redis.call('SET', key, wa@, 'PX', ttl@ + grace)
