--[[
  lock-release: owner-checked release of one nesting level; at zero the key goes to the process
  registered as its next receiver (docs/decisions/059), else it is freed.

  KEYS[1] lock hash
  KEYS[2] fence string: the last fencing token handed out for the key (TTL: the lease + one day)

  ARGV[1] owner
  ARGV[2] channel to notify
  ARGV[3] the releasing process's id ('' when absent): never granted to itself
  ARGV[4] claim ttl in ms (positive integer): the lease of a grant to another process's placeholder
  ARGV[5] placeholder owner prefix: a grant names '<prefix><pid>' the holder

  Returns
    {1, nesting}        released one level; nesting 0 means the key is now free (and notified 'released')
    {2, token}          released; granted to the registered process (its placeholder holds the key at
                        nesting 1 with this new token and the claim ttl; notified 'g <pid> <reg> <token>')
    {0, 0}              the owner did not hold the key (expired, taken over, or already free)

  Errors: RX_ARG when the claim ttl is not a positive integer.
  Time: TIME (ms) checks the registration's window; TIME (µs) floors a granted token.
  Retry: a release by a non-holder is a no-op; the last level frees or grants the key once.
]]
local claim = tonumber(ARGV[4])
if not claim or claim <= 0 or claim % 1 ~= 0 then
  return redis.error_reply('RX_ARG lock-release: claim ttl must be a positive integer')
end

if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return {0, 0}
end

local nesting = redis.call('HINCRBY', KEYS[1], 'nesting', -1)
if nesting > 0 then
  return {1, nesting}
end

local reg = redis.call('HMGET', KEYS[1], 'next', 'next_reg', 'next_at', 'next_until')
if reg[1] and reg[1] ~= ARGV[3] then
  local time = redis.call('TIME')
  local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local at = tonumber(reg[3] or '0') or 0
  if tonumber(reg[4] or '0') >= nowMs and at + claim > nowMs then
    local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
    local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
    local token = string.format('%d', math.max(last + 1, nowUs))
    redis.call('SET', KEYS[2], token, 'PX', claim + 86400000)
    redis.call('DEL', KEYS[1])
    redis.call('HSET', KEYS[1], 'owner', ARGV[5] .. reg[1], 'token', token, 'nesting', 1,
      'exec', '', 'reactor', '', 'step', '', 'pid', reg[1])
    -- The claim lease counts from the registration's landing, so the receiver can bound it by its send time.
    redis.call('PEXPIREAT', KEYS[1], at + claim)
    redis.call('PUBLISH', ARGV[2], 'g ' .. reg[1] .. ' ' .. (reg[2] or '') .. ' ' .. token)
    return {2, token}
  end
end

redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], 'released')
return {1, 0}
