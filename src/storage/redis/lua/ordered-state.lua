--[[
  ordered-state: read the counters of an ordered lock (read only).

  KEYS[1] ordered hash (see ordered-ticket)

  ARGV none.

  Returns {epoch, issued, last_completed, in_flight, first_failed} (0 = none).

  Errors: none.
]]
local s = redis.call('HMGET', KEYS[1], 'epoch', 'issued', 'last_completed', 'in_flight', 'first_failed')
return {tonumber(s[1] or '0'), tonumber(s[2] or '0'), tonumber(s[3] or '0'), tonumber(s[4] or '0'), tonumber(s[5] or '0')}
