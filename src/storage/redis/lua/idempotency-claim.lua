--[[
  idempotency-claim: claim an idempotency key for an execution, once, and write the winner's
  first record in the same step: whoever learns the winner's id from the claim finds a record.
  The record is written and indexed exactly as record-save does, only if it is absent.

  KEYS[1..n] the fixed keys below, then the tag and other-status index keys (variadic)
  KEYS[1] claim string: the winning execution id (expires with its TTL)
  KEYS[2] the claiming execution's record string (JSON)
  KEYS[3] index ZSET of every record (member id, score createdAt)
  KEYS[4] index ZSET of the record's reactor
  KEYS[5] index ZSET of the record's status
  KEYS[6..] the record's tag index ZSETs (one per tag key=value; ARGV[5] of them), then the
          index ZSETs of every other status (the record leaves them: a status change moves it)

  ARGV[1] execution id (also the index member)
  ARGV[2] ttl in ms (positive integer), of the claim, the record and each index key
  ARGV[3] the record JSON to write with a won claim; '' writes none
  ARGV[4] createdAt (the index score)
  ARGV[5] how many tag index keys follow KEYS[5] (absent: 0)

  Returns
    {1}                 claimed (also when this execution already holds the claim)
    {0, executionId}    another execution claimed it first (nothing written)

  Errors: RX_ARG when the ttl is not a positive integer (nothing written).
  Retry: a repeated claim by the same execution answers claimed again and never overwrites
  the record (SET NX): what the execution saved since stays.
]]
local ttl = tonumber(ARGV[2])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG idempotency-claim: ttl must be a positive integer')
end
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ttl) then
  local holder = redis.call('GET', KEYS[1])
  if holder ~= ARGV[1] then
    return {0, holder}
  end
end
if ARGV[3] ~= '' and redis.call('SET', KEYS[2], ARGV[3], 'NX', 'PX', ttl) then
  for i = 3, 5 do
    redis.call('ZADD', KEYS[i], ARGV[4], ARGV[1])
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
  -- The tag indexes (written like the three above), then the other statuses' indexes, which the
  -- record leaves: it is in one status index only, the one of the status written here.
  local tags = tonumber(ARGV[5]) or 0
  for i = 6, #KEYS do
    if i < 6 + tags then
      redis.call('ZADD', KEYS[i], ARGV[4], ARGV[1])
      redis.call('PEXPIRE', KEYS[i], ttl)
    else
      redis.call('ZREM', KEYS[i], ARGV[1])
    end
  end
end
return {1}
