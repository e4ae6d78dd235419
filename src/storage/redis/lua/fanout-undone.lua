--[[
  fanout-undone: mark a completed element undone (once) and find the next one to undo.

  KEYS[1] ledger hash of the map

  ARGV[1] element index
  ARGV[2] ttl in ms (positive integer)

  Fields: `top`, set in the rollback phase, is at or above every completed element: the scan
  for the next one starts there (and lowers it), so a whole rollback scans each index once.

  Returns
    {target, wakeJob}   the highest completed element left (-1: rollback over); the wake job or ''

  Errors: RX_FANOUT_UNKNOWN when the ledger does not exist or the index is out of range.
  Retry: marking again changes nothing and answers the same target.
]]
local total = tonumber(redis.call('HGET', KEYS[1], 'total'))
local index = tonumber(ARGV[1])
if not total or not index or index < 0 or index >= total or index % 1 ~= 0 then
  return redis.error_reply('RX_FANOUT_UNKNOWN fanout-undone: no ledger, or no such element')
end
if redis.call('HGET', KEYS[1], 's:' .. index) == 'c' then
  redis.call('HSET', KEYS[1], 's:' .. index, 'u')
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
local top = tonumber(redis.call('HGET', KEYS[1], 'top') or '')
if not top then top = tonumber(redis.call('HGET', KEYS[1], 'next')) - 1 end
local target = -1
for i = top, 0, -1 do
  if redis.call('HGET', KEYS[1], 's:' .. i) == 'c' then
    target = i
    break
  end
end
if redis.call('HGET', KEYS[1], 'phase') == 'rollback' then redis.call('HSET', KEYS[1], 'top', target) end
return {target, redis.call('HGET', KEYS[1], 'wake') or ''}
