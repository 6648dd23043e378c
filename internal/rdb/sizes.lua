-- sizes: the three counts of a queue in one consistent read (Laravel's size script
-- returns their sum).
--
-- KEYS[1]  ready list      PREFIX queues:NAME
-- KEYS[2]  delayed zset    PREFIX queues:NAME:delayed
-- KEYS[3]  reserved zset   PREFIX queues:NAME:reserved
-- No ARGV.
-- Returns {LLEN ready, ZCARD delayed, ZCARD reserved}.

return {
  redis.call('llen', KEYS[1]),
  redis.call('zcard', KEYS[2]),
  redis.call('zcard', KEYS[3]),
}
