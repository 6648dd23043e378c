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
--
-- The effect is function hz_completed, which a batch also calls for each job of a group
-- of completions that share all but their own keys and arguments (horizon_batch.lua);
-- the line "-- entry" ends it.

local function hz_completed(job, recent, pending, finished, monitored, monitoring,
    id, connection, queue, name, payload, t, negT, pendingAt, completedAt, monitoredAt, reserve,
    tags, first, last)
  if redis.call('hexists', job, 'id') == 0 then
    redis.call('zadd', recent, negT, id)
    redis.call('zadd', pending, negT, id)
    redis.call('hset', job, 'id', id, 'connection', connection, 'queue', queue, 'name', name,
      'status', 'pending', 'payload', payload, 'created_at', t, 'updated_at', t)
    redis.call('expireat', job, pendingAt)
  end
  if reserve == 'reserved' then
    redis.call('hset', job, 'status', 'reserved', 'payload', payload, 'updated_at', t, 'reserved_at', t)
  end

  redis.call('zadd', finished, negT, id)
  redis.call('zrem', pending, id)
  redis.call('hset', job, 'status', 'completed', 'completed_at', t)
  redis.call('expireat', job, completedAt)

  for i = first, last do
    if redis.call('sismember', monitoring, tags[i]) == 1 then
      redis.call('zadd', monitored, negT, id)
      redis.call('hset', job, 'id', id, 'connection', connection, 'queue', queue, 'name', name,
        'status', 'completed', 'payload', payload, 'completed_at', t)
      redis.call('expireat', job, monitoredAt)
      return 1
    end
  end
  return 0
end
-- entry
return hz_completed(KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6],
  ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11],
  ARGV, 12, #ARGV)
