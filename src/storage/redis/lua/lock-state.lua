--[[
  lock-state: read the holder of a lock (read only).

  KEYS[1] lock hash

  ARGV none.

  Returns
    {}                                                    free
    {owner, exec, reactor, step, nesting, token, pttl}    held

  Errors: none.
]]
local h = redis.call('HMGET', KEYS[1], 'owner', 'exec', 'reactor', 'step', 'nesting', 'token')
if not h[1] then
  return {}
end
return {h[1], h[2] or '', h[3] or '', h[4] or '', tonumber(h[5] or '0'), h[6] or '', redis.call('PTTL', KEYS[1])}
