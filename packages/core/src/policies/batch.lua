-- Batches (redis/batch.ts coalesces them): several calls of one combination of kinds in one
-- script run, each answered exactly as the one-call script would have answered it alone.
-- redis/lua.ts puts the one-call script's body (compose.lua's prelude and the fragments, the same
-- text) between @head and @tail as the function `one`, reading its KEYS and ARGV at offsets kb
-- and ab; there the prelude's TIME read becomes batch_clock, read at most once per batch, before
-- the first call, and only when some call needs it (server clock or a deadline).
-- KEYS: PER_CALL_KEYS per call (one per policy), call after call. ARGV: PER_CALL_ARGS per call
-- (the one-call script's ARGV), call after call.
-- Reply: one entry per call, in order: the one-call script's reply ({ 'late', time } for a call
-- past its own deadline, which charged nothing while its batch-mates went on), or
-- { 'error', message } for a call that raised an error: alone it would have failed the script,
-- here it fails only its own caller, and its batch-mates' charges are answered, not lost.
-- @head
local batch_clock
local calls = #KEYS / PER_CALL_KEYS
for c = 0, calls - 1 do
  local ab = c * PER_CALL_ARGS
  if ARGV[ab + 3] == '' or ARGV[ab + 4] ~= '' then
    batch_clock = redis.call('TIME')
    break
  end
end
local function one(kb, ab)
-- @tail
end
local replies = {}
for c = 0, calls - 1 do
  local ok, reply = pcall(one, c * PER_CALL_KEYS, c * PER_CALL_ARGS)
  if not ok then
    reply = { 'error', type(reply) == 'table' and reply.err or tostring(reply) }
  end
  replies[c + 1] = reply
end
return replies
