-- The composition: every policy of one identity at one instant; charge all or none.
-- KEYS: one per policy. ARGV: mode ('limit' | 'peek'), cost, now ('' = Redis TIME),
-- deadline (Redis time in ms after which the caller has given up; '' = none), then per policy:
-- kind, p1, p2, p3.
-- Reply: per policy allowed (0/1), remaining, reset ms, retry ms, delay ms; then the Redis TIME
-- read in ms (0 when not read). A call past its deadline writes nothing and replies
-- { 'late', time }: its caller has answered without it, so charging it would charge twice.
if redis.replicate_commands then
  pcall(redis.replicate_commands)
end
local mode = ARGV[1]
local cost = tonumber(ARGV[2])
if mode == 'peek' then
  cost = 1
end
local time = 0
if ARGV[3] == '' or ARGV[4] ~= '' then
  local t = redis.call('TIME')
  time = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
if ARGV[4] ~= '' and time > tonumber(ARGV[4]) then
  return { 'late', time }
end
local now = time
if ARGV[3] ~= '' then
  now = tonumber(ARGV[3])
end

local results = {}
local all = true
for i = 1, #KEYS do
  local b = 4 + (i - 1) * 4
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
reply[#reply + 1] = time
return reply
