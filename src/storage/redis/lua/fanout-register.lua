--[[
  fanout-register: register the parent's wake job and, for phase rollback, start the rollback.

  KEYS[1] ledger hash of the map

  ARGV[1] wake job id (the parent's delayed job a settlement promotes)
  ARGV[2] phase: collect | rollback (rollback is never undone)
  ARGV[3] ttl in ms (positive integer)

  Returns the ledger as a flat field/value list (HGETALL), read after the registration. Starting
  the rollback sets `top` (where the scan for the next element to undo starts) to next - 1.

  Errors: RX_FANOUT_UNKNOWN when the ledger does not exist.
  Retry: registering again replaces the wake job; the phase only moves forward.
]]
if redis.call('EXISTS', KEYS[1]) == 0 then
  return redis.error_reply('RX_FANOUT_UNKNOWN fanout-register: no ledger')
end
redis.call('HSET', KEYS[1], 'wake', ARGV[1])
if ARGV[2] == 'rollback' and redis.call('HGET', KEYS[1], 'phase') ~= 'rollback' then
  -- Every completed element is below the cursor: the rollback's scans start there (`top`).
  redis.call('HSET', KEYS[1], 'phase', 'rollback', 'top', tonumber(redis.call('HGET', KEYS[1], 'next')) - 1)
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return redis.call('HGETALL', KEYS[1])
