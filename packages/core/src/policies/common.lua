-- Floodgate: helpers shared by the policy fragments. A script includes only the helpers its
-- fragments call (each local function is a closure made on every run). Every number is an
-- integer below 2^53, and every operation runs in the order of the TypeScript reference
-- (common.ts), so the doubles agree bit for bit.
-- @helper floor_div
local function floor_div(a, b)
  local q = math.floor(a / b)
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
