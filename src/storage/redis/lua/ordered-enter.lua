--[[
  ordered-enter: try to enter the ordered lock at a position (gate = last_completed + 1).

  KEYS[1] ordered hash (see ordered-ticket)

  ARGV[1] nonce
  ARGV[2] epoch of the ticket
  ARGV[3] poison ms: a head with no sign of life for this long is passed over
  ARGV[4] strict ('1' | '0')
  ARGV[5] holder info JSON
  ARGV[6] channel to notify when a head is passed over

  Returns {'entered'} | {'wait', head} | {'chain_failed', firstFailed} | {'stale', epoch} | {'passed'}

  Errors: RX_ARG on invalid numbers.
  Time: TIME (ms). Sign of life of the head: its heartbeat when in flight, otherwise the last
  advance of the cursor (advanced_at). Passing a head counts as an advance, so each dead
  position gets its own poisonMs.
  Retry: entering twice re-enters (refreshing the heartbeat); waiting twice changes nothing.
]]
local nonce, epoch, poison = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
if not nonce or nonce < 1 or nonce % 1 ~= 0 or not epoch or not poison or poison < 0 then
  return redis.error_reply('RX_ARG ordered-enter: nonce, epoch and poison ms must be numbers')
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local h = redis.call('HMGET', KEYS[1], 'epoch', 'issued', 'last_completed', 'in_flight',
  'heartbeat_at', 'advanced_at', 'first_failed')
local current = tonumber(h[1] or '0')
if current ~= epoch then return {'stale', current} end
local issued, last = tonumber(h[2] or '0'), tonumber(h[3] or '0')
local inFlight, heartbeat = tonumber(h[4] or '0'), tonumber(h[5] or '0')
local advanced, failed = tonumber(h[6] or '0'), tonumber(h[7] or '0')

for pass = 1, 2 do
  if nonce <= last then return {'passed'} end
  if ARGV[4] == '1' and failed > 0 and failed < nonce then return {'chain_failed', failed} end
  local head = last + 1
  if nonce == head then
    redis.call('HSET', KEYS[1], 'in_flight', nonce, 'heartbeat_at', now, 'holder', ARGV[5])
    return {'entered'}
  end
  local alive = advanced
  if inFlight == head then alive = heartbeat end
  if pass == 2 or head > issued or now - alive < poison then return {'wait', head} end

  -- poison pill: pass over the dead head, then look again
  last, advanced = head, now
  redis.call('PUBLISH', ARGV[6], 'advanced')
  if last >= issued then
    -- drained: a new epoch fences every ticket of the finished batch
    redis.call('DEL', KEYS[1])
    redis.call('HSET', KEYS[1], 'epoch', string.format('%d', math.max(current + 1, now)),
      'issued', 0, 'last_completed', 0, 'advanced_at', now)
    return {'passed'}
  end
  redis.call('HSET', KEYS[1], 'last_completed', last, 'advanced_at', now)
  if inFlight == head then
    inFlight = 0
    redis.call('HDEL', KEYS[1], 'in_flight', 'heartbeat_at', 'holder')
  end
end
