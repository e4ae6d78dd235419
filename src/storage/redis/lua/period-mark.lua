--[[
  period-mark: mark a bucket once.

  KEYS[1] bucket marker string (expires with its TTL)

  ARGV[1] ttl in ms (positive integer)
  ARGV[2] the marker's note (optional; default '1'): what a reader of the marker learns, such
          as a cancel request's reason

  Returns 1 when this call marked the bucket, 0 when it was already marked.

  Errors: RX_ARG when the ttl is not a positive integer.
  Time: the marker's expiry is kept by the server (PX); no client time.
  Retry: a second mark leaves the first marker, its note and its TTL untouched.
]]
local ttl = tonumber(ARGV[1])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG period-mark: ttl must be a positive integer')
end
local note = ARGV[2]
if not note or note == '' then
  note = '1'
end
if redis.call('SET', KEYS[1], note, 'NX', 'PX', ttl) then
  return 1
end
return 0
