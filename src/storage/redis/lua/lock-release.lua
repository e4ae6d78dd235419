--[[
  lock-release: owner-checked release of one nesting level; at zero the key is granted to the
  process queued first for it (docs/decisions/059), else it is freed.

  KEYS[1] lock hash {owner, token, nesting, exec, reactor, step, pid, qseq, q:<pid>…}
  KEYS[2] fence string: the last fencing token handed out for the key (TTL: the lease + one day)

  ARGV[1] owner
  ARGV[2] channel to notify
  ARGV[3] the releasing process's id ('' when absent): never granted to itself
  ARGV[4] claim ttl in ms (positive integer): the lease of a grant to another process's placeholder
  ARGV[5] placeholder owner prefix: a grant names '<prefix><pid>' the holder
  ARGV[6] the releaser's registration id if it has waiters left ('' = none): queued again after a grant
  ARGV[7] registration window in ms (positive integer when ARGV[6] is given)

  Returns
    {1, nesting}          released one level; at nesting 0 the key is free (notified 'released')
    {2, token, requeued}  granted to the first queued process's placeholder (nesting 1, this new token,
                          the claim ttl; notified 'g <pid> <registration> <token>'); requeued = 1 when
                          the releaser queued up again
    {0, 0}                the owner did not hold the key (expired, taken over, or already free)

  Errors: RX_ARG when the claim ttl or the registration window is not a positive integer.
  Time: TIME (ms) checks the registrations' windows; TIME (µs) floors a granted token.
  Retry: a release by a non-holder is a no-op; the last level frees or grants the key once.
  Queue: fields q:<pid> (lock-acquire); the lowest live place wins; lapsed and own ones are dropped.
]]
local claim = tonumber(ARGV[4])
if not claim or claim <= 0 or claim % 1 ~= 0 then
  return redis.error_reply('RX_ARG lock-release: claim ttl must be a positive integer')
end
local requeue, window = ARGV[6] or '', tonumber(ARGV[7] or '')
if requeue ~= '' and (not window or window <= 0 or window % 1 ~= 0) then
  return redis.error_reply('RX_ARG lock-release: registration window must be a positive integer')
end

if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then
  return {0, 0}
end

local nesting = redis.call('HINCRBY', KEYS[1], 'nesting', -1)
if nesting > 0 then
  return {1, nesting}
end

local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local fields = redis.call('HGETALL', KEYS[1])
local first, firstPlace, firstPid, firstReg
for i = 1, #fields, 2 do
  local field, pid = fields[i], string.sub(fields[i], 3)
  if string.sub(field, 1, 2) == 'q:' then
    local reg, untilMs, place = string.match(fields[i + 1], '^(%S+) %d+ (%d+) (%d+)$')
    if pid == ARGV[3] or not untilMs or tonumber(untilMs) < nowMs then
      redis.call('HDEL', KEYS[1], field)
    elseif not firstPlace or tonumber(place) < firstPlace then
      first, firstPlace, firstPid, firstReg = field, tonumber(place), pid, reg
    end
  end
end

if first then
  local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
  local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
  local token = string.format('%d', math.max(last + 1, nowUs))
  redis.call('SET', KEYS[2], token, 'PX', claim + 86400000)
  redis.call('HDEL', KEYS[1], first)
  redis.call('HSET', KEYS[1], 'owner', ARGV[5] .. firstPid, 'token', token, 'nesting', 1,
    'exec', '', 'reactor', '', 'step', '', 'pid', firstPid)
  local requeued = 0
  if requeue ~= '' and ARGV[3] ~= '' then
    local place = redis.call('HINCRBY', KEYS[1], 'qseq', 1)
    redis.call('HSET', KEYS[1], 'q:' .. ARGV[3], requeue .. ' ' .. nowMs .. ' ' .. (nowMs + window) .. ' ' .. place)
    requeued = 1
  end
  -- The claim lease counts from the grant, after the registration's send: the receiver's bound.
  redis.call('PEXPIRE', KEYS[1], claim)
  redis.call('PUBLISH', ARGV[2], 'g ' .. firstPid .. ' ' .. firstReg .. ' ' .. token)
  return {2, token, requeued}
end

redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], 'released')
return {1, 0}
