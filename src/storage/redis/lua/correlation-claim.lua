--[[
  correlation-claim: claim an interrupt's correlation id for an execution (unique across executions).

  KEYS[1] claim string: the holding execution id (expires with its TTL)

  ARGV[1] execution id
  ARGV[2] ttl in ms (positive integer)
  ARGV[3] execution id whose stale claim may be taken over ('' for none)

  Returns
    {1}             claimed (also when this execution holds it already, or it took over ARGV[3]'s claim)
    {0, holder}     another execution holds it

  Errors: RX_ARG when the ttl is not a positive integer.
  Retry: a repeated claim by the same execution answers claimed again.
]]
local ttl = tonumber(ARGV[2])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG correlation-claim: ttl must be a positive integer')
end
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] and (ARGV[3] == '' or holder ~= ARGV[3]) then
  return {0, holder}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
return {1}
