--[[
  event-effect: append an execution to one list of a kept event's effects, once (the EventLog
  port, docs/decisions/142).

  KEYS[1] the event's hash (RedisKeys.event)

  ARGV[1] the effect's field: 's' (started), 'r' (resumed) or 'c' (cancelled)
  ARGV[2] execution id

  Returns
    1   the execution is in that list now (appended, or there already)
    0   no such event is kept

  Errors: none.
  Time: none read; the hash keeps its expiry.
  Retry: a second run finds the execution in the list and changes nothing.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
local current = redis.call('HGET', KEYS[1], ARGV[1])
local ids = {}
if current then
  ids = cjson.decode(current)
  for _, id in ipairs(ids) do
    if id == ARGV[2] then
      return 1
    end
  end
end
ids[#ids + 1] = ARGV[2]
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(ids))
return 1
