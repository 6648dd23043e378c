-- horizon_pushed: Horizon's bookkeeping for a job pushed onto a queue, the effect of its
-- JobPushed listeners in order: StoreJob (RedisJobRepository::pushed) then
-- StoreMonitoredTags.
--
-- KEYS[1]     job hash           P ID
-- KEYS[2]     recent jobs        P recent_jobs
-- KEYS[3]     pending jobs       P pending_jobs
-- KEYS[4]     monitored tags     P monitoring
-- KEYS[5..]   one tag zset per payload tag, P TAG, in the order of ARGV[9..]
-- ARGV[1]     job id (payload uuid ?? id)
-- ARGV[2]     queue connection name        ARGV[3]  bare queue name
-- ARGV[4]     displayName ("" when null)   ARGV[5]  the payload as pushed
-- ARGV[6]     T, decimal seconds as PHP prints microtime(true)
-- ARGV[7]     -T (the job lists' score)    ARGV[8]  now + trim.pending minutes, Unix s
-- ARGV[9..]   the payload's tags
--
-- Effect: ZADD recent_jobs -T ID; ZADD pending_jobs -T ID; HSET ID id connection queue
-- name status=pending payload created_at=T updated_at=T; EXPIREAT ID ARGV[8]; then, for
-- each tag that is a member of monitoring, ZADD P TAG +T ID.
-- Returns the number of monitored tags the job was added to.

local id = ARGV[1]
redis.call('zadd', KEYS[2], ARGV[7], id)
redis.call('zadd', KEYS[3], ARGV[7], id)
redis.call('hset', KEYS[1], 'id', id, 'connection', ARGV[2], 'queue', ARGV[3], 'name', ARGV[4],
  'status', 'pending', 'payload', ARGV[5], 'created_at', ARGV[6], 'updated_at', ARGV[6])
redis.call('expireat', KEYS[1], ARGV[8])

local n = 0
for i = 9, #ARGV do
  if redis.call('sismember', KEYS[4], ARGV[i]) == 1 then
    redis.call('zadd', KEYS[i - 4], ARGV[6], id)
    n = n + 1
  end
end
return n
