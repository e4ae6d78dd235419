--[[
  idempotency-claim: claim an idempotency key for an execution, once.

  KEYS[1] claim string: the winning execution id (expires with its TTL)

  ARGV[1] execution id
  ARGV[2] ttl in ms (positive integer)

  Returns
    {1}                 claimed (also when this execution already holds the claim)
    {0, executionId}    another execution claimed it first

  Errors: RX_ARG when the ttl is not a positive integer.
  Retry: a repeated claim by the same execution answers claimed again.
]]
local ttl = tonumber(ARGV[2])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG idempotency-claim: ttl must be a positive integer')
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ttl) then
  return {1}
end
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  return {1}
end
return {0, holder}
