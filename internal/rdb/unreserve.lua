-- unreserve: give a reserved job back to the head of its ready list without spending an
-- attempt (laraq only; used when a worker took a job it will not run, e.g. on shutdown).
--
-- KEYS[1]  ready list      PREFIX queues:NAME
-- KEYS[2]  reserved zset   PREFIX queues:NAME:reserved
-- KEYS[3]  notify list     PREFIX queues:NAME:notify
-- ARGV[1]  the reserved payload, byte for byte as the pop script returned it
-- ARGV[2]  the original payload as popped (its attempts is the count before the pop)
--
-- Effect: ZREM reserved ARGV[1]; only if that removed it: LPUSH ready ARGV[2] and
-- RPUSH notify "1" (the job is ready again, so it gets its token back).
-- A key of the wrong type fails it before its first write, naming the key
-- (key_types.lua, prepended): the ready and notify lists by a TYPE each, the reserved
-- zset through its ZREM; else a job taken from :reserved could not be pushed back.
-- Returns 1 when the job was given back, 0 when the reservation was gone.

local bad = wrong_type(KEYS[1], 'list') or wrong_type(KEYS[3], 'list')
if bad then
  return bad
end
local removed = redis.pcall('zrem', KEYS[2], ARGV[1])
if type(removed) == 'table' then
  return refused(removed, KEYS[2], 'zset')
end
if removed == 0 then
  return 0
end
redis.call('lpush', KEYS[1], ARGV[2])
redis.call('rpush', KEYS[3], '1')
return 1
