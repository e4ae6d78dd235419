--[[
  event-wait-lookup: one page of the registrations of one kind under one (event, match key), in
  member order, with their times (the EventWaits port, docs/decisions/148). Reads nothing else.

  KEYS[1] the members of one (event, match key) (RedisKeys.eventWaitMembers): ZSET member -> 0
  KEYS[2] the times of the same (RedisKeys.eventWaitTimes): HASH member -> since (ms)

  ARGV[1] the lowest member of the page, inclusive or exclusive, as ZRANGEBYLEX takes it:
          '[' .. kind .. separator for the first page, '(' .. cursor for a later one
  ARGV[2] the bound past the kind's members: '(' .. kind .. (the character after the separator)
  ARGV[3] the page size plus one (positive integer): one more than a page tells a next one exists

  Returns
    {member1, since1, member2, since2, ...}   at most ARGV[3] registrations

  Errors: none.
  Time: none read.
  Retry: read only.
]]
local members = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
local out = {}
for _, member in ipairs(members) do
  out[#out + 1] = member
  out[#out + 1] = redis.call('HGET', KEYS[2], member) or '0'
end
return out
