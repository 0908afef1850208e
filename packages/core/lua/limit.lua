-- The composition: every policy of one identity at one instant; charge all or none.
-- KEYS: one per policy. ARGV: mode ('limit' | 'peek'), cost, now ('' = Redis TIME),
-- then per policy: kind, p1, p2, p3.
-- Reply: per policy allowed (0/1), remaining, reset ms, retry ms, delay ms.
if redis.replicate_commands then
  pcall(redis.replicate_commands)
end
local mode = ARGV[1]
local cost = tonumber(ARGV[2])
if mode == 'peek' then
  cost = 1
end
local now
if ARGV[3] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[3])
end

local results = {}
local all = true
for i = 1, #KEYS do
  local b = 3 + (i - 1) * 4
  local r = { POLICIES[ARGV[b + 1]](KEYS[i], tonumber(ARGV[b + 2]), tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4]), now, cost) }
  if not r[1] then
    all = false
  end
  results[i] = r
end

local charge = all and mode == 'limit'
local reply = {}
for i = 1, #KEYS do
  local r = results[i]
  if charge then
    r[6]()
    reply[#reply + 1] = 1
    reply[#reply + 1] = r[7]
    reply[#reply + 1] = r[8]
    reply[#reply + 1] = 0
    reply[#reply + 1] = r[5]
  else
    local delay = 0
    if mode == 'peek' then
      delay = r[5]
    end
    reply[#reply + 1] = r[1] and 1 or 0
    reply[#reply + 1] = r[2]
    reply[#reply + 1] = r[3]
    reply[#reply + 1] = r[4]
    reply[#reply + 1] = delay
  end
end
return reply
