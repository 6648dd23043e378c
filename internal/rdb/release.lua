-- release: move a reserved job to the delayed zset, the effect of Laravel's release
-- script when the reservation is still held.
--
-- KEYS[1]  delayed zset    PREFIX queues:NAME:delayed
-- KEYS[2]  reserved zset   PREFIX queues:NAME:reserved
-- ARGV[1]  the reserved payload, byte for byte as the pop script returned it
-- ARGV[2]  available-at, integer Unix seconds
--
-- Effect: ZREM reserved ARGV[1]; if that removed it, ZADD delayed ARGV[2] ARGV[1].
-- Laravel adds to the delayed zset even when the ZREM removed nothing; that happens when
-- the reservation expired and another worker already moved the job back to the ready
-- list (or when the bytes differ from the reserved copy), and adding it then duplicates
-- the job. Here nothing is added in that case.
--
-- A key of the wrong type fails the release before its first write, naming the key
-- (key_types.lua, prepended): the delayed zset by a TYPE, the reserved zset through its
-- ZREM. Laravel's script would have removed the job from :reserved and then failed to
-- add it to :delayed: the job lost.
-- Returns 1 when the reservation was found and the job moved, 0 otherwise.

local bad = wrong_type(KEYS[1], 'zset')
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
redis.call('zadd', KEYS[1], ARGV[2], ARGV[1])
return 1
