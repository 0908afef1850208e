-- Floodgate: helpers shared by the policy fragments. A script includes only the helpers its
-- fragments call (each local function is a closure made on every run). Every number is an
-- integer below 2^53, and every operation runs in the order of the TypeScript reference
-- (common.ts), so the doubles agree bit for bit.
-- @helper floor_div
-- q - q % 1 is math.floor(q) for every finite q (Lua's % is a - floor(a / b) * b, in C), without
-- a call into Lua's math library: a call costs more than the arithmetic (callgrind).
local function floor_div(a, b)
  local q = a / b
  q = q - q % 1
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end
-- @helper ceil_div
local function ceil_div(a, b)
  return 0 - floor_div(-a, b)
end
-- @write window
-- The write of the window kinds (fixedWindow, slidingWindow, quota; compose.lua says why): within
-- the key's window on the server clock, INCRBY what the admission adds (ws@), which keeps the
-- expiry; else on the server clock SET, then PEXPIREAT the end of the state's window (t + ttl@;
-- one command less with SET … PXAT, but that needs Redis 6.2); on the client clock SET … PX on
-- every write, since PX counts from Redis's clock, not the caller's, and keeping the first expiry
-- would let the key outlive a later decision's resetAfterMs.
if ws@ then
  redis.call('INCRBY', key, ws@)
elseif server then
  redis.call('SET', key, wa@)
  redis.call('PEXPIREAT', key, t + ttl@)
else
  redis.call('SET', key, wa@, 'PX', ttl@ + grace)
end
