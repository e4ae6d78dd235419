--[[
  wait-list-add: append a parked job to the wait list of a key, once (docs/decisions/007).

  KEYS[1] wait list ZSET: member = parked job id, score = its arrival number

  ARGV[1] job id
  ARGV[2] lifetime of the list after this add, in ms (positive integer)

  Returns
    1   appended after the current tail
    0   the job was already on the list (its place is kept)

  Errors: none.
  Retry: a second add of the same job id finds it present and answers 0.
]]
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
local tail = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
local score = 1
if tail[2] then
  score = tonumber(tail[2]) + 1
end
redis.call('ZADD', KEYS[1], score, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
