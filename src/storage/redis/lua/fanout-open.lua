--[[
  fanout-open: create the ledger of a fan-out map once, dispatching its first batch.

  KEYS[1] ledger hash of the map

  ARGV[1] total elements (integer >= 0)
  ARGV[2] batch size (integer >= 1)
  ARGV[3] atomic: 1 stops dispatching at the first failure, 0 runs every element
  ARGV[4] ttl in ms (positive integer), refreshed on every write

  Returns
    {next, created}   elements dispatched so far (indexes 0 .. next-1); created 1 on creation

  Errors: RX_ARG when a number is not a valid integer.
  Retry: opening again changes nothing and answers the current cursor.
]]
local total, batch, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4])
if not total or total < 0 or total % 1 ~= 0 or not batch or batch < 1 or batch % 1 ~= 0 or not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG fanout-open: total, batch size and ttl must be integers (total >= 0, batch >= 1, ttl > 0)')
end
local next = redis.call('HGET', KEYS[1], 'next')
if next then
  return {tonumber(next), 0}
end
next = math.min(batch, total)
redis.call('HSET', KEYS[1], 'total', total, 'batch', batch, 'atomic', ARGV[3], 'next', next,
  'settled', 0, 'failed', 0, 'stopped', 0, 'phase', 'collect')
redis.call('PEXPIRE', KEYS[1], ttl)
return {next, 1}
