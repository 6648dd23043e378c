-- cache_add: store a cache value only when its key does not exist yet, the effect of
-- Illuminate\Cache\RedisStore::add() (its "add" script, 8.x-13.x), which RateLimiter::hit
-- uses to open a window and start a counter without resetting a running one.
--
-- KEYS[1]  the cache key   PREFIX CACHE_PREFIX[:]NAME
-- ARGV[1]  the value as RedisStore stores it (a number raw, anything else serialized)
-- ARGV[2]  seconds to live (at least 1)
--
-- Effect: SETEX KEYS[1] ARGV[2] ARGV[1] when KEYS[1] does not exist; nothing otherwise (an
-- existing key keeps its value and its TTL).
-- Returns 1 when the value was stored, 0 when the key existed.

if redis.call('exists', KEYS[1]) == 1 then
  return 0
end
redis.call('setex', KEYS[1], ARGV[2], ARGV[1])
return 1
