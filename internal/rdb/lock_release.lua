-- lock_release: release a Laravel cache lock only if this owner holds it, the effect of
-- Illuminate\Cache\RedisLock::release() (LuaScripts::releaseLock()).
--
-- KEYS[1]  the lock key   PREFIX CACHE_PREFIX[:]NAME
-- ARGV[1]  the owner the lock was taken with (stored as the key's value, unserialized)
--
-- Effect: DEL KEYS[1] when its value is ARGV[1]; nothing otherwise (the lock expired
-- and another owner took it, or it was never held).
-- Returns 1 when the lock was released, 0 otherwise.

if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
