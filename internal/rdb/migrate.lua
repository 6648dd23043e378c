-- migrate: move due members of a zset (delayed or reserved) to the end of the ready
-- list, the effect of Laravel's migrateExpiredJobs script (5.8+; LIMIT since 9.23).
--
-- KEYS[1]  source zset     PREFIX queues:NAME:delayed or PREFIX queues:NAME:reserved
-- KEYS[2]  ready list      PREFIX queues:NAME
-- KEYS[3]  notify list     PREFIX queues:NAME:notify
-- ARGV[1]  now, integer Unix seconds; members scored <= now are due
-- ARGV[2]  at most this many members (> 0), or no limit (<= 0)
--
-- Effect: ZRANGEBYSCORE source -inf now [LIMIT 0 limit]; ZREMRANGEBYRANK source 0
-- count-1 (the same members: a range starting at -inf is a prefix of the rank order,
-- ties broken by member bytes, so equal scores beyond the limit stay); RPUSH ready the
-- members in score order, in slices of 100; one "1" pushed to notify per member moved.
--
-- A key of the wrong type fails the migration before its first write, naming the key
-- (key_types.lua, prepended): the source through ZRANGEBYSCORE, the ready and notify
-- lists by a TYPE each when members are due. Laravel's script would have removed the
-- members from the source and then failed to push them: jobs lost.
-- Returns the number of members moved.

local due
local limit = tonumber(ARGV[2])
if limit > 0 then
  due = redis.pcall('zrangebyscore', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, limit)
else
  due = redis.pcall('zrangebyscore', KEYS[1], '-inf', ARGV[1])
end
if due.err then
  return refused(due, KEYS[1], 'zset')
end
local n = #due
if n == 0 then
  return 0
end
local bad = wrong_type(KEYS[2], 'list') or wrong_type(KEYS[3], 'list')
if bad then
  return bad
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
return n
