-- horizon_update: Horizon's bookkeeping when a job is reserved (MarkJobAsReserved:
-- RedisJobRepository::reserved), released (MarkJobAsReleased: released) or moved back to
-- the ready list by a migration (MarkJobsAsMigrated: migrated, once per moved payload).
--
-- KEYS[1]  job hash        P ID
-- KEYS[2]  recent jobs     P recent_jobs
-- KEYS[3]  pending jobs    P pending_jobs
-- ARGV[1]  job id          ARGV[2]  connection     ARGV[3]  bare queue name
-- ARGV[4]  displayName     ARGV[5]  payload to store (the reserved copy, or the moved one)
-- ARGV[6]  T               ARGV[7]  -T             ARGV[8]  now + trim.pending minutes
-- ARGV[9]  the new status: "reserved" (also sets reserved_at) or "pending"
--
-- Effect, as Horizon: HSET ID status payload updated_at=T [reserved_at=T]. No TTL change.
--
-- Where laraq differs, on purpose: Horizon's writes assume the hash StoreJob made at push
-- time. For a job Horizon did not push (a vanilla Laravel or laraq dispatch), or whose hash
-- expired while it waited (trim.pending), Horizon's HSET makes a hash without id, which
-- the dashboard drops (RedisJobRepository::getJobs keeps rows whose id is set), and
-- without a TTL, so it lives until the job finishes. When the hash has no id, this script
-- first writes what StoreJob would have (ZADD recent_jobs and pending_jobs -T ID; HSET id
-- connection queue name status=pending payload created_at=T updated_at=T; EXPIREAT
-- ARGV[8]), so the job is listed like any other.
-- Returns 1 when the hash was adopted that way, else 0.

local id = ARGV[1]
local adopted = 0
if redis.call('hexists', KEYS[1], 'id') == 0 then
  redis.call('zadd', KEYS[2], ARGV[7], id)
  redis.call('zadd', KEYS[3], ARGV[7], id)
  redis.call('hset', KEYS[1], 'id', id, 'connection', ARGV[2], 'queue', ARGV[3], 'name', ARGV[4],
    'status', 'pending', 'payload', ARGV[5], 'created_at', ARGV[6], 'updated_at', ARGV[6])
  redis.call('expireat', KEYS[1], ARGV[8])
  adopted = 1
end
if ARGV[9] == 'reserved' then
  redis.call('hset', KEYS[1], 'status', 'reserved', 'payload', ARGV[5], 'updated_at', ARGV[6], 'reserved_at', ARGV[6])
else
  redis.call('hset', KEYS[1], 'status', ARGV[9], 'payload', ARGV[5], 'updated_at', ARGV[6])
end
return adopted
