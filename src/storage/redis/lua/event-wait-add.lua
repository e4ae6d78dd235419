--[[
  event-wait-add: file a registration of an execution waiting for an event, once (the EventWaits
  port, docs/decisions/148).

  KEYS[1] the members of one (event, match key) (RedisKeys.eventWaitMembers): ZSET member -> 0,
          read in member order (ZRANGEBYLEX)
  KEYS[2] the times of the same (RedisKeys.eventWaitTimes): HASH member -> since (ms)

  ARGV[1] member: kind, execution id and ref joined by the unit separator (eventWaitMember)

  Returns
    since   the registration's first time, server ms (now when filed by this call)

  Errors: none.
  Time: the server's (TIME), the clock of the event log's receipt times.
  Retry: a second run finds the member filed and answers its first time, changing nothing.
]]
local since = redis.call('HGET', KEYS[2], ARGV[1])
if since and redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return tonumber(since)
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZADD', KEYS[1], 0, ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], now)
return now
