-- migrate_jobs: migrate (see migrate.lua), returning the members it moved instead of
-- their number, as Laravel's migrateExpiredJobs script does. Horizon's RedisQueue fires
-- JobsMigrated with them and records each as pending again.
--
-- KEYS[1]  source zset     PREFIX queues:NAME:delayed or PREFIX queues:NAME:reserved
-- KEYS[2]  ready list      PREFIX queues:NAME
-- KEYS[3]  notify list     PREFIX queues:NAME:notify
-- ARGV[1]  now, integer Unix seconds; members scored <= now are due
-- ARGV[2]  at most this many members (> 0), or no limit (<= 0)
--
-- Effect: exactly migrate.lua's. Returns the moved members in the order they were pushed.

local due
local limit = tonumber(ARGV[2])
if limit > 0 then
  due = redis.call('zrangebyscore', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, limit)
else
  due = redis.call('zrangebyscore', KEYS[1], '-inf', ARGV[1])
end
local n = #due
if n == 0 then
  return due
end
redis.call('zremrangebyrank', KEYS[1], 0, n - 1)
local ones = {}
for i = 1, math.min(n, 100) do
  ones[i] = '1'
end
for first = 1, n, 100 do
  local last = math.min(first + 99, n)
  redis.call('rpush', KEYS[2], unpack(due, first, last))
  redis.call('rpush', KEYS[3], unpack(ones, 1, last - first + 1))
end
return due
