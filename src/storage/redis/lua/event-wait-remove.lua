--[[
  event-wait-remove: remove a registration of an execution waiting for an event (the EventWaits
  port, docs/decisions/148).

  KEYS[1] the members of one (event, match key) (RedisKeys.eventWaitMembers): ZSET member -> 0
  KEYS[2] the times of the same (RedisKeys.eventWaitTimes): HASH member -> since (ms)

  ARGV[1] member: kind, execution id and ref joined by the unit separator (eventWaitMember)

  Returns
    1   the member was filed and is gone
    0   it was not filed (nothing changed)

  Errors: none.
  Time: none read. An emptied key is deleted by Redis (an empty ZSET or HASH does not exist).
  Retry: a second run finds nothing and answers 0.
]]
local removed = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return removed
