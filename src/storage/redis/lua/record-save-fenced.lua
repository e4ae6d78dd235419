--[[
  record-save-fenced: a worker's checkpoint of the execution it works on — write the record
  (and index it when asked) only while the worker still holds the execution's liveness lease,
  in one step: a worker that lost its lease writes nothing (docs/decisions/064).

  KEYS[1..n] the fixed keys below, then the tag and other-status index keys (variadic)
  KEYS[1] record string (JSON; its TTL is the record's)
  KEYS[2] index ZSET of every record (member id, score createdAt)
  KEYS[3] index ZSET of the record's reactor
  KEYS[4] index ZSET of the record's status
  KEYS[5] liveness lock hash of the execution
  KEYS[6..] the record's tag index ZSETs (one per tag key=value; ARGV[7] of them), then the
          index ZSETs of every other status (the record leaves them: a status change moves it)

  ARGV[1] the record JSON
  ARGV[2] ttl in ms (positive integer), also applied to each index key
  ARGV[3] createdAt (the index score)
  ARGV[4] execution id (the index member)
  ARGV[5] owner of the liveness lock (this delivery of the job)
  ARGV[6] '1' to write the index entries too, '0' when they hold the record under its status
  ARGV[7] how many tag index keys follow KEYS[5] (absent: 0)

  Returns 1 (written, or already exactly this record: a resend after a lost reply) or 0 (the
  owner does not hold the lease: nothing written).

  Errors: RX_ARG when the ttl is not a positive integer (nothing written).
  Retry: idempotent — the same record and index entries are written again, under the same check.
]]
local ttl = tonumber(ARGV[2])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG record-save-fenced: ttl must be a positive integer')
end
if redis.call('HGET', KEYS[5], 'owner') ~= ARGV[5] then
  if redis.call('GET', KEYS[1]) == ARGV[1] then
    return 1
  end
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
if ARGV[6] == '1' then
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
end
return 1
