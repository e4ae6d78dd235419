--[[
  stream-append: append the events of one or more executions to their execution streams, in
  order, and keep each stream as long as the records (the ExecutionStream port,
  docs/decisions/138 and 158). One call replaces an XADD per event and a PEXPIRE per stream.

  KEYS[1..n] the execution streams (RedisKeys.executionStream), one per execution in the call;
             on a cluster a call carries one execution only (its keys share no slot otherwise)

  ARGV[1] about how many entries a stream keeps (MAXLEN ~; positive integer)
  ARGV[2] ttl in ms (positive integer): each stream expires this long after this append
  ARGV[3..] for each key in order: the number of its events k, then its k events (JSON text)

  Returns
    n    the number of streams appended to

  Errors: RX_ARG when the cap or the ttl is not a positive integer, or when the counts do not
          match the events given (nothing appended).
  Retry: sent again only when it surely did not run (it is counted, script.ts COUNTED): a
         resend after a lost reply would append the same events twice. The engine logs a failed
         append and goes on (watchers miss those events).
]]
local cap = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
if not cap or cap <= 0 or cap % 1 ~= 0 or not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG stream-append: cap and ttl must be positive integers')
end
-- Check the shape before writing anything: every key has its count and its events.
local at = 3
for i = 1, #KEYS do
  local count = tonumber(ARGV[at])
  if not count or count < 0 or count % 1 ~= 0 or at + count > #ARGV then
    return redis.error_reply('RX_ARG stream-append: the event counts do not match the events')
  end
  at = at + 1 + count
end
if at ~= #ARGV + 1 then
  return redis.error_reply('RX_ARG stream-append: the event counts do not match the events')
end
at = 3
for i = 1, #KEYS do
  local count = tonumber(ARGV[at])
  for j = 1, count do
    redis.call('XADD', KEYS[i], 'MAXLEN', '~', cap, '*', 'e', ARGV[at + j])
  end
  redis.call('PEXPIRE', KEYS[i], ttl)
  at = at + 1 + count
end
return #KEYS
