--[[
  fanout-settle: record how one element settled (once) and claim the next element to dispatch.

  KEYS[1] ledger hash of the map: counters, `s:<i>` status code, `c:<i>` claim of element i,
          `top` (rollback: at or above every completed element, see fanout-undone)

  ARGV[1] element index
  ARGV[2] status code: c completed, f failed, s skipped (ran, nothing to undo), n not started
  ARGV[3] ttl in ms (positive integer)

  Returns
    {first, claim, done, wakeJob, phase}
      first    1 when counted now, 0 when this index had settled before (nothing counted again)
      claim    the element to dispatch next (same answer on a repeat), or -1 (none left, stopped, or rolling back)
      done     1 when every dispatched element settled and nothing more will be dispatched
      wakeJob  the parent's registered wake job, or ''
      phase    collect, or rollback once the run rolls the map back (a cancel while elements ran)

  Errors: RX_FANOUT_UNKNOWN when the ledger does not exist or the index is out of range.
  Cost: constant, whatever the number of elements (a few hash fields).
  Retry: a repeated settlement of an index answers its first claim and counts nothing.
]]
local total = tonumber(redis.call('HGET', KEYS[1], 'total'))
local index = tonumber(ARGV[1])
if not total or not index or index < 0 or index >= total or index % 1 ~= 0 then
  return redis.error_reply('RX_FANOUT_UNKNOWN fanout-settle: no ledger, or no such element')
end
local function done()
  local next = tonumber(redis.call('HGET', KEYS[1], 'next'))
  local settled = tonumber(redis.call('HGET', KEYS[1], 'settled'))
  local stopped = redis.call('HGET', KEYS[1], 'stopped') == '1'
  if settled == next and (stopped or next == total) then return 1 end
  return 0
end
local wake = redis.call('HGET', KEYS[1], 'wake') or ''
local phase = redis.call('HGET', KEYS[1], 'phase')
local known = redis.call('HGET', KEYS[1], 'c:' .. index)
if known then
  return {0, tonumber(known), done(), wake, phase}
end
redis.call('HSET', KEYS[1], 's:' .. index, ARGV[2])
redis.call('HINCRBY', KEYS[1], 'settled', 1)
if ARGV[2] == 'f' then
  redis.call('HINCRBY', KEYS[1], 'failed', 1)
  if redis.call('HGET', KEYS[1], 'atomic') == '1' then redis.call('HSET', KEYS[1], 'stopped', 1) end
end
local claim = -1
local next = tonumber(redis.call('HGET', KEYS[1], 'next'))
if redis.call('HGET', KEYS[1], 'stopped') ~= '1' and phase ~= 'rollback' and next < total then
  claim = next
  redis.call('HSET', KEYS[1], 'next', next + 1)
end
if phase == 'rollback' and ARGV[2] == 'c' then
  -- Completed after the rollback began (a cancel while it ran): keep `top` at or above it.
  local top = tonumber(redis.call('HGET', KEYS[1], 'top') or '')
  if top and index > top then redis.call('HSET', KEYS[1], 'top', index) end
end
redis.call('HSET', KEYS[1], 'c:' .. index, claim)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, claim, done(), wake, phase}
