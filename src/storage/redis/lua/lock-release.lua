--[[
  lock-release: owner-checked release of one nesting level; frees the key at zero.

  KEYS[1] lock hash

  ARGV[1] owner
  ARGV[2] channel to notify when the key is freed

  Returns
    {1, nesting}    released one level; nesting 0 means the key is now free (and notified)
    {0, 0}          the owner did not hold the key (expired, taken over, or already free)

  Errors: none.
  Retry: a release by a non-holder is a no-op; the last level deletes the key once.
]]
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return {0, 0}
end

local nesting = redis.call('HINCRBY', KEYS[1], 'nesting', -1)
if nesting > 0 then
  return {1, nesting}
end

redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], 'released')
return {1, 0}
