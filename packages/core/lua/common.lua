-- Floodgate: shared helpers. Every number here is an integer below 2^53, and every operation
-- runs in the order of the TypeScript reference (src/math.ts, src/policies/evaluate.ts), so the
-- doubles agree bit for bit.
local function floor_div(a, b)
  local q = math.floor(a / b)
  if q * b > a then
    q = q - 1
  elseif (q + 1) * b <= a then
    q = q + 1
  end
  return q
end

local function ceil_div(a, b)
  return 0 - floor_div(-a, b)
end

-- '%.17g' prints every safe integer exactly; tostring would stop at 14 digits.
local function fmt(x)
  return string.format('%.17g', x)
end

-- Scalar states are stored as one string "a:b:c" of integers.
local function load_state(key)
  local raw = redis.call('GET', key)
  if not raw then
    return nil
  end
  local s = {}
  for part in string.gmatch(raw, '[^:]+') do
    s[#s + 1] = tonumber(part)
  end
  return s
end

local function save_state(key, ttl, a, b, c)
  local value = fmt(a) .. ':' .. fmt(b)
  if c ~= nil then
    value = value .. ':' .. fmt(c)
  end
  redis.call('SET', key, value, 'PX', ttl)
end

-- A caller whose clock is behind a key's state is evaluated at the key's time (time never runs
-- backward for a key), but every duration returned, and every TTL set, counts from the caller's
-- clock: shift = key's time - caller's time is added, as in src/policies/evaluate.ts (late).
-- Each policy: function(key, p1, p2, p3, now, cost) returning
-- allowed, remaining, reset, retry, delay [, commit, next_remaining, next_reset].
local POLICIES = {}
