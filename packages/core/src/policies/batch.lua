-- Batches (redis/batch.ts coalesces them): several calls of one combination of kinds in one
-- script run, each answered exactly as the one-call script would have answered it alone.
-- redis/assemble-batch.ts puts the one-call script's body (compose.lua's prelude and the
-- fragments, the same text) between @head and @tail as the function `one`, reading its KEYS and
-- ARGV at offsets kb and ab; there the prelude's TIME read becomes batch_time, read at most once per
-- batch, before the first call, and only when some call needs it (server clock or a deadline).
-- String state goes through a write-back cache for the run (assemble-batch.ts rewrites the
-- body's GET, SET … PX, SET then PEXPIREAT, INCRBY and DEL into kget, kset, kval/kinc sums and
-- kdel; the common cases inline, since a Lua call costs more than a cache lookup): a key is read
-- once, by the first call that names it; every later call sees the value the earlier ones left,
-- as it would have read it back from Redis; and a written key is written once, right after the
-- last call of the batch that names it: with the value and the expiry of its last SET when a call of the batch
-- set it (a later INCRBY raises that value), else by one INCRBY of what the batch's INCRBYs add
-- (keeping the key's expiry, as each of them would have). No other client sees a key between two
-- calls (a script runs atomically), so every reply and the keys the run leaves are those of the
-- calls run one after another, with one GET and one write per key instead of one each per call.
-- A PEXPIREAT expiry is absolute. A PX one counts from that SET (Redis 7.0 does not freeze the
-- clock SET … PX counts from while a script runs), as it counted from the last writer's own SET: later
-- by the script time of the calls between the last writer and the last call naming the key
-- (microseconds, and none when they are the same call), never by the rest of the batch.
-- Any other command on a key (the log's sorted sets) goes through kcall, which writes the key
-- out and forgets it first. A write Redis refuses fails the whole run (all of its calls), never
-- answers a charge that was not stored: SET refuses an expiry (kset passes those to Redis at
-- once, so the call's own error is as before) or, past maxmemory, a script's first write.
-- Repeats (one hot identity): the client sends a run of identical calls (the same KEYS and ARGV,
-- one after another) as one entry standing for n calls. `many` (assemble-batch.ts: the same body,
-- its cost times n, answering only whether every policy admits) decides them as one call of n
-- times the cost: for the kinds it is made for, the n calls one after another are all admitted
-- exactly when that one call is, and leave the state it leaves (each admission adds its cost to
-- a count, or to a bucket's level, at the same instant). Then the entry's reply is the state
-- before them, and the client replays the n decisions on it with the TypeScript reference, which
-- decides as this script does. Otherwise nothing was written, and the n calls run one by one.
-- KEYS: PER_CALL_KEYS per entry (one per policy), entry after entry. ARGV: first, '' or, for
-- each entry that stands for n > 1 calls, '<entry> <n>' (entries from 1), space-separated; then
-- one per entry, the number of its block (from 1); then the blocks, PER_CALL_ARGS each: a call's
-- ARGV as the one-call script takes it. What a batch's calls share is sent once: the calls of one
-- limiter in one tick (same mode, cost, clock, deadline ms and parameters) name one block, so a
-- call costs Redis one short argument instead of PER_CALL_ARGS (and the client as much to send).
-- Reply: one flat array. Per call, in order: a decision as the one-call script's five fields
-- per policy (its `time` left out); or one nested entry, { 'late', time } for a call at or past
-- its own deadline, which charged nothing while its batch-mates went on, or { 'error', message } for
-- a call that raised an error: alone it would have failed the script, here it fails only its
-- own caller, and its batch-mates' charges are answered, not lost. For an entry of n calls
-- decided as one: { 'rep', value of each of its keys before them (false: none) }. Last, the
-- batch's Redis TIME in ms (0 when not read), what each call's `time` would have been.
-- @head
local batch_time = 0
local calls = #KEYS / PER_CALL_KEYS
local reps = ARGV[1] ~= '' and {}
if reps then
  for e, n in string.gmatch(ARGV[1], '(%d+) (%d+)') do
    reps[tonumber(e)] = tonumber(n)
  end
end
for ab = 1 + calls, #ARGV - 1, PER_CALL_ARGS do
  if ARGV[ab + 3] == '' or ARGV[ab + 4] ~= '' then
    -- In ms once, so no call parses the same two strings again: each call's `time`.
    local clock = redis.call('TIME')
    batch_time = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
    break
  end
end
local flat, nf = {}, 0
-- tonumber of an ARGV string, parsed once per run (strtod is most of a call's own Lua time,
-- and the calls of one limiter send the same parameters): the same number tonumber gives.
local parsed = {}
local function num(s)
  local n = parsed[s]
  if n == nil then
    n = tonumber(s)
    parsed[s] = n
  end
  return n
end
-- An integer's decimal digits, formatted once per run: what a sliding window's INCRBY adds (its
-- cost times its radix, the same for the calls of one limiter), which Redis 7.0 would print
-- with %.17g per call (printed[n] or digits(n); fmt's %d is exact below 2^53).
local printed = {}
local function digits(n)
  local s = fmt('%d', n)
  printed[n] = s
  return s
end
-- kval[key]: the key's value as the calls so far left it (false: no key); kpx[key]: the expiry
-- of its last SET, in ms for PX and negated for PEXPIREAT (false: deleted), nil while unset;
-- kinc[key]: what INCRBYs added, written out only when no SET or DEL is pending (an INCRBY adds
-- to kval, and to kinc when kpx is nil; only on a key the call has just read and found
-- int-encoded, the fragments' rule, so Lua's arithmetic reads it as tonumber would);
-- klast[key]: the index in KEYS of the last entry naming it, after whose call it is written out.
local kval, kpx, kinc, klast = {}, {}, {}, {}
for i = 1, #KEYS do
  klast[KEYS[i]] = i
end
local function kget(key)
  local v = kval[key]
  if v == nil then
    v = redis.call('GET', key)
    kval[key] = v
  end
  return v
end
-- unit: 'PX' (px ms from the write) or 'PEXPIREAT' (px an absolute ms: SET, then PEXPIREAT).
local function kset(key, v, px, unit)
  if px ~= px or px < 1 or px % 1 ~= 0 then
    -- An expiry Redis refuses: its command raises its own error now, as it would have alone.
    if unit == 'PX' then
      redis.call('SET', key, v, 'PX', px)
    else
      redis.call('SET', key, v)
      redis.call('PEXPIREAT', key, px)
    end
  end
  kval[key] = v
  if unit == 'PX' then
    kpx[key] = px
  else
    kpx[key] = -px
  end
end
local function kdel(key)
  kval[key] = false
  kpx[key] = false
end
local function kflush(key)
  local px = kpx[key]
  if px then
    if px > 0 then
      redis.call('SET', key, kval[key], 'PX', px)
    else
      redis.call('SET', key, kval[key])
      redis.call('PEXPIREAT', key, -px)
    end
  elseif px == false then
    redis.call('DEL', key)
  elseif kinc[key] then
    redis.call('INCRBY', key, kinc[key])
  end
  kval[key], kpx[key], kinc[key] = nil, nil, nil
end
local function kcall(command, key, ...)
  if kval[key] ~= nil then
    kflush(key)
  end
  return redis.call(command, key, ...)
end
local function one(kb, ab)
-- @tail
end
-- @loop
-- A block's offset in ARGV, by the string that names it (Lua interns strings: one lookup).
local block_at = {}
for c = 0, calls - 1 do
  local kb, b = c * PER_CALL_KEYS, ARGV[2 + c]
  local ab = block_at[b]
  if ab == nil then
    ab = 1 + calls + (tonumber(b) - 1) * PER_CALL_ARGS
    block_at[b] = ab
  end
  local n = reps and reps[c + 1]
  local each = 1
  if n then
    local rep = { 'rep' }
    for i = 1, PER_CALL_KEYS do
      local key = KEYS[kb + i]
      local v = kval[key]
      if v == nil then
        v = kget(key)
      end
      rep[i + 1] = v
    end
    local ok, all = pcall(many, kb, ab, n)
    if ok and all == true then
      nf = nf + 1
      flat[nf] = rep
      each = 0
    elseif ok then
      -- A denial among them, or past the deadline: nothing was written; one by one.
      each = n
    else
      -- It fails each of the n callers, as it would have failed each call alone.
      for _ = 1, n do
        nf = nf + 1
        flat[nf] = { 'error', type(all) == 'table' and all.err or tostring(all) }
      end
      each = 0
    end
  end
  for _ = 1, each do
    -- `one` puts a decision into `flat` itself and returns nothing; a late call returns its reply.
    local ok, reply = pcall(one, kb, ab)
    if not ok then
      nf = nf + 1
      flat[nf] = { 'error', type(reply) == 'table' and reply.err or tostring(reply) }
    elseif reply then
      nf = nf + 1
      flat[nf] = reply
    end
  end
  for i = kb + 1, kb + PER_CALL_KEYS do
    if klast[KEYS[i]] == i then
      kflush(KEYS[i])
    end
  end
end
flat[nf + 1] = batch_time
return flat
