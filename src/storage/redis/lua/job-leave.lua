--[[
  job-leave: a worker ends a job with a record write — while it still holds the job's liveness
  lock, save and index the execution record (exactly as record-save), then release one level of
  that lock (exactly as lock-release), in one step: the next holder always reads this record,
  and a worker that lost the lock writes nothing (docs/decisions/064).

  KEYS[1..n] the fixed keys below, then the tag and other-status index keys (variadic)
  KEYS[1] execution record string (JSON; its TTL is the record's)
  KEYS[2] index ZSET of every record (member id, score createdAt)
  KEYS[3] index ZSET of the record's reactor
  KEYS[4] index ZSET of the record's status
  KEYS[5] liveness lock hash
  KEYS[6..] the record's tag index ZSETs (one per tag key=value; ARGV[7] of them), then the
          index ZSETs of every other status (the record leaves them: a status change moves it)

  ARGV[1] the record JSON
  ARGV[2] ttl in ms (positive integer), also applied to each index key
  ARGV[3] createdAt (the index score)
  ARGV[4] execution id (the index member)
  ARGV[5] owner of the lock (this delivery of the job)
  ARGV[6] channel to notify when the lock is freed
  ARGV[7] how many tag index keys follow KEYS[5] (absent: 0)

  Returns
    {1, nesting}    saved, and released one level; nesting 0 means the lock is free (and notified)
    {2, 0}          the owner does not hold the lock but the record is exactly ARGV[1] (a resend
                    of this call after its reply was lost): nothing more done
    {0, 0}          the owner does not hold the lock (expired or taken over): nothing written

  Errors: RX_ARG when the ttl is not a positive integer (nothing written).
  Retry: a resend after a lost reply that had freed the lock answers {2, 0}; one that had only
  lowered the nesting releases one more level (the job's own nested levels end with it anyway).
]]
local ttl = tonumber(ARGV[2])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG job-leave: ttl must be a positive integer')
end
if redis.call('HGET', KEYS[5], 'owner') ~= ARGV[5] then
  if redis.call('GET', KEYS[1]) == ARGV[1] then
    return {2, 0}
  end
  return {0, 0}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
for i = 2, 4 do
  redis.call('ZADD', KEYS[i], ARGV[3], ARGV[4])
  redis.call('PEXPIRE', KEYS[i], ttl)
end
-- The tag indexes (written like the three above), then the other statuses' indexes, which the
-- record leaves: it is in one status index only, the one of the status written here.
local tags = tonumber(ARGV[7]) or 0
for i = 6, #KEYS do
  if i < 6 + tags then
    redis.call('ZADD', KEYS[i], ARGV[3], ARGV[4])
    redis.call('PEXPIRE', KEYS[i], ttl)
  else
    redis.call('ZREM', KEYS[i], ARGV[4])
  end
end

local nesting = redis.call('HINCRBY', KEYS[5], 'nesting', -1)
if nesting > 0 then
  return {1, nesting}
end
redis.call('DEL', KEYS[5])
redis.call('PUBLISH', ARGV[6], 'released')
return {1, 0}
