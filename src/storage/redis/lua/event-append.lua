--[[
  event-append: keep a sent event once per id (the EventLog port, docs/decisions/142).

  KEYS[1] the event's hash (RedisKeys.event): name, payload, ts, at, and the effects s, r, c
  KEYS[2] the index of every event (RedisKeys.eventIndex): ZSET id -> receipt time (ms)
  KEYS[3] the index of the event's name (RedisKeys.eventNameIndex): ZSET id -> receipt time (ms)

  ARGV[1] event id
  ARGV[2] event name
  ARGV[3] payload, JSON text
  ARGV[4] the event's time in ms, or '' for the time of receipt
  ARGV[5] retention in ms (positive integer): the hash expires this long after receipt, and index
          entries older than it are removed

  Returns
    {1, at}                              accepted: stored now, received at server time `at` (ms)
    {0, name, payload, ts, at, s, r, c}  duplicate: the kept event's fields, nothing changed
                                         (s, r, c: JSON arrays of execution ids, or false when none)

  Errors: none.
  Time: the receipt time is the server's (TIME).
  Retry: a second run after a lost reply finds the event kept and answers it as a duplicate.
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  local f = redis.call('HMGET', KEYS[1], 'name', 'payload', 'ts', 'at', 's', 'r', 'c')
  return {0, f[1], f[2], f[3], f[4], f[5], f[6], f[7]}
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[5])
local ts = ARGV[4]
if ts == '' then
  ts = tostring(now)
end
redis.call('HSET', KEYS[1], 'name', ARGV[2], 'payload', ARGV[3], 'ts', ts, 'at', now)
redis.call('PEXPIRE', KEYS[1], ttl)
for i = 2, 3 do
  redis.call('ZADD', KEYS[i], now, ARGV[1])
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - ttl)
  redis.call('PEXPIRE', KEYS[i], ttl)
end
return {1, now}
