--[[
  resume-unclaim: give back a resume claim its claimant could not use (the run was no longer
  paused, its liveness lock stayed busy, or writing the payload failed).

  KEYS[1] claim string: the winning claimant (expires with its lease)

  ARGV[1] claimant

  Returns
    1   the claim was this claimant's and is gone
    0   another claimant holds it, or it expired already

  Errors: none.
  Retry: a second call finds the claim gone and answers 0.
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
