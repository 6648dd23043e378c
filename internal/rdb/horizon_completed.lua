-- horizon_completed: Horizon's bookkeeping when a job that did not fail is deleted from
-- the reserved zset (JobDeleted): MarkJobAsComplete, i.e. RedisJobRepository::completed
-- and, for a job with a monitored tag, remember. The retry_of update of completed() is
-- horizon_retry_status; the metrics (UpdateJobMetrics) are horizon_metrics.
--
-- KEYS[1]  job hash          P ID
-- KEYS[2]  recent jobs       P recent_jobs     (only when the hash is adopted, see below)
-- KEYS[3]  pending jobs      P pending_jobs
-- KEYS[4]  finished list     P completed_jobs, or P silenced_jobs for a silenced payload
-- KEYS[5]  monitored jobs    P monitored_jobs
-- KEYS[6]  monitored tags    P monitoring
-- ARGV[1]  job id       ARGV[2]  connection    ARGV[3]  bare queue name
-- ARGV[4]  displayName  ARGV[5]  the reserved copy of the payload
-- ARGV[6]  T            ARGV[7]  -T
-- ARGV[8]  now + trim.pending, ARGV[9] now + trim.completed, ARGV[10] now + trim.monitored
--          (Unix seconds)
-- ARGV[11] "reserved": record the job's reservation at T first (see below); else ""
-- ARGV[12..] the payload's tags
--
-- Effect, as Horizon: ZADD finished -T ID; ZREM pending_jobs ID; HSET ID status=completed
-- completed_at=T; EXPIREAT ID ARGV[9]. Then, when a tag is a member of monitoring:
-- ZADD monitored_jobs -T ID; HSET ID id connection queue name status=completed payload
-- completed_at=T; EXPIREAT ID ARGV[10].
-- A hash without id is first adopted as in horizon_update (StoreJob's writes, TTL
-- ARGV[8]), so the finished job is listed.
-- With ARGV[11] "reserved", horizon_update's reserved write comes next (HSET
-- status=reserved payload updated_at=T reserved_at=T): the effect of horizon_update with
-- the status reserved followed by this script, at the same T, in one call. A worker
-- sends it when a job's reservation and completion are recorded in the same round trip.
-- Returns 1 when the job was remembered as monitored, else 0.

local id = ARGV[1]
if redis.call('hexists', KEYS[1], 'id') == 0 then
  redis.call('zadd', KEYS[2], ARGV[7], id)
  redis.call('zadd', KEYS[3], ARGV[7], id)
  redis.call('hset', KEYS[1], 'id', id, 'connection', ARGV[2], 'queue', ARGV[3], 'name', ARGV[4],
    'status', 'pending', 'payload', ARGV[5], 'created_at', ARGV[6], 'updated_at', ARGV[6])
  redis.call('expireat', KEYS[1], ARGV[8])
end
if ARGV[11] == 'reserved' then
  redis.call('hset', KEYS[1], 'status', 'reserved', 'payload', ARGV[5], 'updated_at', ARGV[6], 'reserved_at', ARGV[6])
end

redis.call('zadd', KEYS[4], ARGV[7], id)
redis.call('zrem', KEYS[3], id)
redis.call('hset', KEYS[1], 'status', 'completed', 'completed_at', ARGV[6])
redis.call('expireat', KEYS[1], ARGV[9])

for i = 12, #ARGV do
  if redis.call('sismember', KEYS[6], ARGV[i]) == 1 then
    redis.call('zadd', KEYS[5], ARGV[7], id)
    redis.call('hset', KEYS[1], 'id', id, 'connection', ARGV[2], 'queue', ARGV[3], 'name', ARGV[4],
      'status', 'completed', 'payload', ARGV[5], 'completed_at', ARGV[6])
    redis.call('expireat', KEYS[1], ARGV[10])
    return 1
  end
end
return 0
