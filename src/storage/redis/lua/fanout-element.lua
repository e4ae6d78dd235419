--[[
  fanout-element: read what one element's job needs, without reading the whole ledger.

  KEYS[1] ledger hash of the map

  ARGV[1] element index

  Returns
    {}                                        no ledger
    {phase, stopped, status, target}
      phase    collect | rollback
      stopped  1 when an atomic map stopped dispatching
      status   the element's code (c f s n u), or '' while pending
      target   in the rollback phase, the highest completed element left (-1: none); else -1

  Errors: none.
  Retry: read only.
]]
local next = tonumber(redis.call('HGET', KEYS[1], 'next'))
if not next then
  return {}
end
local phase = redis.call('HGET', KEYS[1], 'phase')
local target = -1
if phase == 'rollback' then
  -- From `top` (at or above every completed element, kept by fanout-undone), else from the cursor.
  for i = tonumber(redis.call('HGET', KEYS[1], 'top') or '') or next - 1, 0, -1 do
    if redis.call('HGET', KEYS[1], 's:' .. i) == 'c' then
      target = i
      break
    end
  end
end
local stopped = 0
if redis.call('HGET', KEYS[1], 'stopped') == '1' then stopped = 1 end
return {phase, stopped, redis.call('HGET', KEYS[1], 's:' .. ARGV[1]) or '', target}
