--[[
  record-save: write an execution record and index it (reactor, status, tags), in one step (a record whose status
  changed, or one this process has not indexed yet).

  KEYS[1..n] the fixed keys below, then the tag and other-status index keys (variadic)
  KEYS[1] record string (JSON; its TTL is the record's)
  KEYS[2] index ZSET of every record (member id, score createdAt)
  KEYS[3] index ZSET of the record's reactor
  KEYS[4] index ZSET of the record's status
  KEYS[5..] the record's tag index ZSETs (one per tag key=value; ARGV[5] of them), then the
          index ZSETs of every other status (the record leaves them: a status change moves it)

  ARGV[1] the record JSON
  ARGV[2] ttl in ms (positive integer), also applied to each index key
  ARGV[3] createdAt (the index score)
  ARGV[4] execution id (the index member)
  ARGV[5] how many tag index keys follow KEYS[4] (absent: 0)

  Returns 1.

  Errors: RX_ARG when the ttl is not a positive integer.
  Retry: idempotent — the same record and index entries are written again.
]]
local ttl = tonumber(ARGV[2])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG record-save: ttl must be a positive integer')
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
for i = 2, 4 do
  redis.call('ZADD', KEYS[i], ARGV[3], ARGV[4])
  redis.call('PEXPIRE', KEYS[i], ttl)
end
-- The tag indexes (written like the three above), then the other statuses' indexes, which the
-- record leaves: it is in one status index only, the one of the status written here.
local tags = tonumber(ARGV[5]) or 0
for i = 5, #KEYS do
  if i < 5 + tags then
    redis.call('ZADD', KEYS[i], ARGV[3], ARGV[4])
    redis.call('PEXPIRE', KEYS[i], ttl)
  else
    redis.call('ZREM', KEYS[i], ARGV[4])
  end
end
return 1
