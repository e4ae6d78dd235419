--[[
  record-parts-save: write the element states of an execution's large maps, kept apart from its
  record (docs/decisions/076), before the record that names them is written; with an owner, only
  while that owner holds the execution's liveness lease (a worker that lost it writes nothing).

  KEYS[1..n] KEYS[1]: the liveness lock hash of the execution (read only with an owner);
             KEYS[2] onward: one string per map, its element states (JSON; their TTL is the record's)

  ARGV[1] ttl in ms (positive integer), applied to every part
  ARGV[2] owner of the liveness lock, or '' to write without the check
  ARGV[3..] for each part in KEYS order: its JSON, or '' to keep the stored one and only move its TTL

  Returns 1 (written) or 0 (the owner does not hold the lease: nothing written).

  Errors: RX_ARG when the ttl is not a positive integer or a part's value is missing (nothing written).
  Retry: idempotent — the same values are written again, under the same check.
]]
local ttl = tonumber(ARGV[1])
if not ttl or ttl <= 0 or ttl % 1 ~= 0 then
  return redis.error_reply('RX_ARG record-parts-save: ttl must be a positive integer')
end
if #ARGV ~= #KEYS + 1 then
  return redis.error_reply('RX_ARG record-parts-save: one value per part expected')
end
if ARGV[2] ~= '' and redis.call('HGET', KEYS[1], 'owner') ~= ARGV[2] then
  return 0
end
for i = 2, #KEYS do
  local value = ARGV[i + 1]
  if value == '' then
    redis.call('PEXPIRE', KEYS[i], ttl)
  else
    redis.call('SET', KEYS[i], value, 'PX', ttl)
  end
end
return 1
