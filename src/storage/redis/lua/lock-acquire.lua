--[[
  lock-acquire: take the exclusive lock for an owner, or re-enter it; a refused waiting process may queue for a grant (decision 059).

  KEYS[1] lock hash {owner, token, nesting, exec, reactor, step, pid, qseq, q:<pid>…}; its TTL is the lease
  KEYS[2] fence string: the last fencing token handed out (TTL: the lease + one day)

  ARGV[1] owner (root execution id)
  ARGV[2] ttl in ms (positive integer)
  ARGV[3] execution id ('' when absent)
  ARGV[4] reactor ('' when absent)
  ARGV[5] step ('' when absent)
  ARGV[6] the acquiring process's id ('' = this process takes no cross-process grants)
  ARGV[7] registration id, when refused: names this registration in a grant ('' = do not queue)
  ARGV[8] registration window in ms (positive integer when ARGV[7] is given): how long it stays live
  ARGV[9] '1': unfenced (an inline run's liveness lease): no fence read or written, token = TIME µs

  Returns
    {1, token, nesting}                                     acquired; token is a decimal string
    {0, pttl, owner, exec, reactor, step, registered}       held by another owner; registered = 1
                                                            when this process is now queued for a grant

  Errors: RX_ARG when the ttl or the registration window is not a positive integer.
  Time: TIME (µs) floors the token: tokens keep increasing after a restart that lost the fence
  key, which may expire a day after the lease. A re-entrant acquire returns the outer token and
  never shortens the lease.
  Registration (decision 059): field q:<pid> = '<registration id> <landing ms> <live until ms> <place>',
  only by a process other than the holder's; a live one keeps its place (`qseq` order) and takes
  the latest id and window, a new or lapsed one goes to the back.
]]
local ttl = tonumber(ARGV[2])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG lock-acquire: ttl must be a positive integer')
end

local owner = redis.call('HGET', KEYS[1], 'owner')
if owner == ARGV[1] then
  local nesting = redis.call('HINCRBY', KEYS[1], 'nesting', 1)
  if redis.call('PTTL', KEYS[1]) < ttl then
    redis.call('PEXPIRE', KEYS[1], ttl)
  end
  return {1, redis.call('HGET', KEYS[1], 'token'), nesting}
end

local time = redis.call('TIME')
if owner then
  local info = redis.call('HMGET', KEYS[1], 'exec', 'reactor', 'step', 'pid')
  local registered = 0
  local pid = ARGV[6] or ''
  if pid ~= '' and (ARGV[7] or '') ~= '' and info[4] ~= pid then
    local window = tonumber(ARGV[8])
    if not window or window <= 0 or window % 1 ~= 0 then
      return redis.error_reply('RX_ARG lock-acquire: registration window must be a positive integer')
    end
    local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
    local field = 'q:' .. pid
    local old = redis.call('HGET', KEYS[1], field)
    local place
    if old then
      local untilMs, seq = string.match(old, '^%S+ %d+ (%d+) (%d+)$')
      if untilMs and tonumber(untilMs) >= nowMs then place = seq end
    end
    if not place then place = redis.call('HINCRBY', KEYS[1], 'qseq', 1) end
    redis.call('HSET', KEYS[1], field, ARGV[7] .. ' ' .. nowMs .. ' ' .. (nowMs + window) .. ' ' .. place)
    registered = 1
  end
  return {0, redis.call('PTTL', KEYS[1]), owner, info[1] or '', info[2] or '', info[3] or '', registered}
end

local nowUs = tonumber(time[1]) * 1000000 + tonumber(time[2])
local token
if ARGV[9] == '1' then
  token = string.format('%d', nowUs)
else
  local last = tonumber(redis.call('GET', KEYS[2]) or '0') or 0
  token = string.format('%d', math.max(last + 1, nowUs))
  redis.call('SET', KEYS[2], token, 'PX', ttl + 86400000)
end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'token', token, 'nesting', 1,
  'exec', ARGV[3], 'reactor', ARGV[4], 'step', ARGV[5])
if (ARGV[6] or '') ~= '' then
  redis.call('HSET', KEYS[1], 'pid', ARGV[6])
end
redis.call('PEXPIRE', KEYS[1], ttl)
return {1, token, 1}
