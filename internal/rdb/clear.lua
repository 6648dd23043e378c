-- clear: delete every job of a queue, the effect of Laravel's clear script (8.9+).
--
-- KEYS[1]  ready list      PREFIX queues:NAME
-- KEYS[2]  delayed zset    PREFIX queues:NAME:delayed
-- KEYS[3]  reserved zset   PREFIX queues:NAME:reserved
-- KEYS[4]  notify list     PREFIX queues:NAME:notify
-- No ARGV.
--
-- Effect: DEL of the four keys (laraq's invalid list is left alone, as Laravel does not
-- know it).
-- Returns LLEN ready + ZCARD delayed + ZCARD reserved, counted before the DEL.

local size = redis.call('llen', KEYS[1]) + redis.call('zcard', KEYS[2]) + redis.call('zcard', KEYS[3])
redis.call('del', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return size
