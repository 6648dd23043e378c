-- horizon_failed: Horizon's bookkeeping for a job that failed, in the order a PHP worker
-- runs it. Job::fail deletes the job first, so JobDeleted comes first: MarkJobAsComplete
-- with hasFailed() true (RedisJobRepository::completed; no metrics, no monitored copy);
-- then Laravel's JobFailed becomes Horizon's JobFailed: MarkJobAsFailed
-- (RedisJobRepository::failed) and StoreTagsForFailedJob. The retry_of update is
-- horizon_retry_status, queued before this script with status "failed".
--
-- KEYS[1]  job hash          P ID
-- KEYS[2]  recent jobs       P recent_jobs      (only when the hash is adopted)
-- KEYS[3]  pending jobs      P pending_jobs
-- KEYS[4]  completed jobs    P completed_jobs
-- KEYS[5]  silenced jobs     P silenced_jobs
-- KEYS[6]  failed jobs       P failed_jobs
-- KEYS[7]  recent failed     P recent_failed_jobs
-- KEYS[8..] one zset per payload tag, P failed:TAG
-- ARGV[1]  job id       ARGV[2]  connection    ARGV[3]  bare queue name
-- ARGV[4]  displayName  ARGV[5]  the reserved copy of the payload
-- ARGV[6]  T            ARGV[7]  -T
-- ARGV[8]  now + trim.pending, ARGV[9] now + trim.completed, ARGV[10] now + trim.failed
--          (Unix seconds)
-- ARGV[11] "1" when the payload is silenced, else "0"
-- ARGV[12] the exception text ((string) $e in PHP)
-- ARGV[13] the context JSON, "" for none (phpredis writes PHP null as "")
-- ARGV[14] the TTL of the failed:TAG zsets in seconds (trim.failed minutes * 60)
--
-- Effect: (completed) ZADD completed_jobs|silenced_jobs -T ID; ZREM pending_jobs ID;
-- HSET ID status=completed completed_at=T; EXPIREAT ID ARGV[9]; (failed) ZADD
-- failed_jobs -T ID; ZADD recent_failed_jobs -T ID; ZREM pending_jobs, completed_jobs,
-- silenced_jobs ID; HSET ID id connection queue name status=failed payload exception
-- context failed_at=T; EXPIREAT ID ARGV[10]; (tags) per tag ZADD P failed:TAG +T ID and
-- EXPIRE P failed:TAG ARGV[14]. The hash keeps the completed_at of the first step, as in
-- Horizon. A hash without id is first adopted as in horizon_update.
-- Returns the number of failed:TAG zsets written.

local id = ARGV[1]
if redis.call('hexists', KEYS[1], 'id') == 0 then
  redis.call('zadd', KEYS[2], ARGV[7], id)
  redis.call('zadd', KEYS[3], ARGV[7], id)
  redis.call('hset', KEYS[1], 'id', id, 'connection', ARGV[2], 'queue', ARGV[3], 'name', ARGV[4],
    'status', 'pending', 'payload', ARGV[5], 'created_at', ARGV[6], 'updated_at', ARGV[6])
  redis.call('expireat', KEYS[1], ARGV[8])
end

if ARGV[11] == '1' then
  redis.call('zadd', KEYS[5], ARGV[7], id)
else
  redis.call('zadd', KEYS[4], ARGV[7], id)
end
redis.call('zrem', KEYS[3], id)
redis.call('hset', KEYS[1], 'status', 'completed', 'completed_at', ARGV[6])
redis.call('expireat', KEYS[1], ARGV[9])

redis.call('zadd', KEYS[6], ARGV[7], id)
redis.call('zadd', KEYS[7], ARGV[7], id)
redis.call('zrem', KEYS[3], id)
redis.call('zrem', KEYS[4], id)
redis.call('zrem', KEYS[5], id)
redis.call('hset', KEYS[1], 'id', id, 'connection', ARGV[2], 'queue', ARGV[3], 'name', ARGV[4],
  'status', 'failed', 'payload', ARGV[5], 'exception', ARGV[12], 'context', ARGV[13], 'failed_at', ARGV[6])
redis.call('expireat', KEYS[1], ARGV[10])

for i = 8, #KEYS do
  redis.call('zadd', KEYS[i], ARGV[6], id)
  redis.call('expire', KEYS[i], ARGV[14])
end
return #KEYS - 7
