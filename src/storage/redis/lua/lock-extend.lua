--[[
  lock-extend: owner-checked lease refresh.

  KEYS[1] lock hash

  ARGV[1] owner
  ARGV[2] ttl in ms (positive integer): the new remaining lease

  Returns 1 when extended, 0 when the owner no longer holds the key.

  Errors: RX_ARG when the ttl is not a positive integer.
  Retry: setting the same TTL twice is harmless.
]]
local ttl = tonumber(ARGV[2])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG lock-extend: ttl must be a positive integer')
end

if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return 0
end
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
