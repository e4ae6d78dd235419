--[[
  ordered-enter: try to enter the ordered lock at a position (gate = last_completed + 1).

  KEYS[1] ordered hash (see ordered-ticket)

  ARGV[1] nonce
  ARGV[2] epoch of the ticket
  ARGV[3] poison ms: a head with no sign of life for longer than this is passed over
  ARGV[4] strict ('1' | '0')
  ARGV[5] holder info JSON
  ARGV[6] channel to notify when heads are passed over

  Returns {'entered'} | {'wait', head, poisonedInMs} | {'chain_failed', firstFailed} | {'stale', epoch}
    | {'passed'}; poisonedInMs: when the head would be passed over without a sign of life (absent
    after 64 passes in one call)

  Errors: RX_ARG on invalid numbers or a nonce never issued in this epoch.
  Time: TIME (ms). Sign of life of the head: its heartbeat when in flight, otherwise the latest
  of its ticket or last wait (seen:<n>) and the last real advance (advanced_at). Passing a dead
  head is not an advance, so a run of dead positions is passed in one call (up to 64).
  Retry: entering twice re-enters (refreshing the heartbeat); waiting twice refreshes seen.
]]
local nonce, epoch, poison = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if not nonce or not epoch or not poison or poison < 0 then
  return redis.error_reply('RX_ARG ordered-enter: nonce, epoch and poison ms must be numbers')
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local h = redis.call('HMGET', KEYS[1], 'epoch', 'issued', 'last_completed', 'in_flight',
  'heartbeat_at', 'advanced_at', 'first_failed')
local current, issued = tonumber(h[1] or '0'), tonumber(h[2] or '0')
if current ~= epoch then return {'stale', current} end
if nonce < 1 or nonce % 1 ~= 0 or nonce > issued then
  return redis.error_reply('RX_ARG ordered-enter: position ' .. ARGV[1] .. ' was never issued in this epoch')
end
local last, inFlight = tonumber(h[3] or '0'), tonumber(h[4] or '0')
local heartbeat, advanced = tonumber(h[5] or '0'), tonumber(h[6] or '0')
local failed = tonumber(h[7] or '0')

local result, moved = nil, false
for _ = 1, 64 do
  local head = last + 1
  if nonce <= last then result = {'passed'}
  elseif ARGV[4] == '1' and failed > 0 and failed < nonce then result = {'chain_failed', failed}
  elseif nonce == head then result = {'entered'}
  else
    local alive = heartbeat
    if inFlight ~= head then
      alive = math.max(advanced, tonumber(redis.call('HGET', KEYS[1], 'seen:' .. head) or '0'))
    end
    if now - alive <= poison then result = {'wait', head, poison - (now - alive) + 1} end
  end
  if result then break end
  -- poison pill: pass over the dead head and every position completed out of turn behind it
  last, moved = head, true
  redis.call('HDEL', KEYS[1], 'seen:' .. last)
  while redis.call('HDEL', KEYS[1], 'done:' .. (last + 1)) == 1 do
    last = last + 1
    redis.call('HDEL', KEYS[1], 'seen:' .. last)
  end
end
result = result or {'wait', last + 1}

if moved then
  redis.call('PUBLISH', ARGV[6], 'advanced')
  if last >= issued then
    -- drained: a new epoch fences every ticket of the finished batch
    redis.call('DEL', KEYS[1])
    redis.call('HSET', KEYS[1], 'epoch', string.format('%d', math.max(current + 1, now)),
      'issued', 0, 'last_completed', 0, 'advanced_at', now)
    return {'passed'}
  end
  redis.call('HSET', KEYS[1], 'last_completed', last)
  if inFlight > 0 and inFlight <= last then redis.call('HDEL', KEYS[1], 'in_flight', 'heartbeat_at', 'holder') end
end

if result[1] == 'entered' then
  redis.call('HSET', KEYS[1], 'in_flight', nonce, 'heartbeat_at', now, 'holder', ARGV[5])
elseif result[1] == 'wait' then
  redis.call('HSET', KEYS[1], 'seen:' .. nonce, now)
end
return result
