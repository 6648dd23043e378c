-- extend: keep a running job's reservation alive, so that no worker (PHP's
-- migrateExpiredJobs or laraq's migrate script) moves it back to the ready list while its
-- handler is still running.
--
-- KEYS[1]  reserved zset   PREFIX queues:NAME:reserved
-- ARGV[1]  the reserved payload, byte for byte as the pop script returned it
-- ARGV[2]  the new reservation expiry, integer Unix seconds (now + retry_after)
--
-- Effect: when ARGV[1] is a member of KEYS[1], its score becomes ARGV[2] if that is later
-- than the current one (a reservation is never shortened). A member that is gone (the job
-- was acknowledged, released, or its reservation expired and it was migrated back) is
-- never added again: only an existing member is updated.
-- Returns 1 when the member exists (its reservation now runs at least until ARGV[2]),
-- 0 when it is gone.

local score = redis.call('zscore', KEYS[1], ARGV[1])
if not score then
  return 0
end
if tonumber(score) < tonumber(ARGV[2]) then
  redis.call('zadd', KEYS[1], 'XX', ARGV[2], ARGV[1])
end
return 1
