--[[
  lock-transfer: release one nesting level of a held lock; at zero, hand the key straight to a
  named waiter of the same process (docs/decisions/037) instead of freeing it.

  KEYS[1] lock hash {owner, token, nesting, exec, reactor, step, pid, qseq, q:<pid>…}; its TTL is the lease
  KEYS[2] fence string: the last fencing token handed out for the key (TTL: the lease + one day)

  ARGV[1] releasing owner
  ARGV[2] receiving owner
  ARGV[3] receiver's ttl in ms (positive integer)
  ARGV[4] receiver's execution id ('' when absent)
  ARGV[5] receiver's reactor ('' when absent)
  ARGV[6] receiver's step ('' when absent)
  ARGV[7] the receiver's token, when the releaser already handed the key over in memory
          (docs/decisions/043): the releaser's token + 1, granted only when it is above the
          fence; '' or absent: a new token max(fence + 1, now µs), as an acquire would

  Returns
    {2, token}      handed over: the receiver holds the key at nesting 1 with a new fencing token
    {1, nesting}    released one level, still held by the releasing owner (nesting > 0)
    {0, 0}          the releasing owner did not hold the key (expired, taken over, or free),
                    or the given token (ARGV[7]) is not above the fence; nothing changed

  Errors: RX_ARG when the ttl is not a positive integer.
  Retry: not retried (a second call finds another owner and returns {0, 0}). Nothing is
  published: the other waiters still see the key held, as it is.
  Time: TIME (µs) floors a new token; a given token is the releaser's + 1 (strictly increasing).
]]
local ttl = tonumber(ARGV[3])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG lock-transfer: ttl must be a positive integer')
end

if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return {0, 0}
end

local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
local given = ARGV[7] or ''
if given ~= '' and not (tonumber(given) and tonumber(given) > last) then
  return {0, 0}
end

local nesting = redis.call('HINCRBY', KEYS[1], 'nesting', -1)
if nesting > 0 then
  return {1, nesting}
end

local token = given
if token == '' then
  local time = redis.call('TIME')
  local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
  token = string.format('%d', math.max(last + 1, nowUs))
end
redis.call('SET', KEYS[2], token, 'PX', ttl + 86400000)
-- Overwritten, not deleted: other processes' registrations for a grant stay queued (decision 059).
redis.call('HSET', KEYS[1], 'owner', ARGV[2], 'token', token, 'nesting', 1,
  'exec', ARGV[4], 'reactor', ARGV[5], 'step', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ttl)
return {2, token}
