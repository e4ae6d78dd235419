--[[
  ordered-ticket: hand out the next position of the key's current epoch.

  KEYS[1] ordered hash {epoch, issued, last_completed, in_flight, heartbeat_at, advanced_at,
          first_failed, holder, seen:<nonce>, done:<nonce>} (no TTL)

  ARGV none.

  Returns {nonce, epoch}

  Errors: none.
  Time: TIME (ms). A key seen for the first time (or after data loss) starts at epoch = now,
  so tickets of a batch lost with the data are stale. The ticket stamps seen:<nonce>, the
  position's first sign of life; the first position of a fresh batch also restarts advanced_at.
  Retry: a repeated call hands out another position; an unused position is passed over by the
  poison pill once it shows no sign of life for poisonMs.
]]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)

local h = redis.call('HMGET', KEYS[1], 'epoch', 'issued', 'last_completed')
local epoch = tonumber(h[1] or '0')
if epoch == 0 then
  epoch = now
  redis.call('HSET', KEYS[1], 'epoch', string.format('%d', epoch))
end
if tonumber(h[2] or '0') == tonumber(h[3] or '0') then
  redis.call('HSET', KEYS[1], 'advanced_at', now)
end
local nonce = redis.call('HINCRBY', KEYS[1], 'issued', 1)
redis.call('HSET', KEYS[1], 'seen:' .. nonce, now)
return {nonce, epoch}
