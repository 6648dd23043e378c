-- duration_acquire: take one slot of a Redis DurationLimiter window, the effect of
-- Illuminate\Redis\Limiters\DurationLimiter::acquire() (8.x-13.x), which
-- RateLimitedWithRedis and ThrottlesExceptionsWithRedis use.
--
-- KEYS[1]  the limiter hash   PREFIX NAME (a Redis connection's prefix; no cache prefix)
-- ARGV[1]  now with microseconds, as PHP's string form of microtime(true) ("1700000000.1234")
-- ARGV[2]  now, integer Unix seconds
-- ARGV[3]  the window's length in seconds (decay)
-- ARGV[4]  slots per window (maxLocks)
--
-- The hash holds start (Unix seconds), end (start + decay) and count. Laravel compares
-- ARGV[1] with start and end as strings, not numbers; the same comparison is made here,
-- so both sides agree on every boundary.
-- Effect: when the hash exists and start <= ARGV[1] <= end (string order), HINCRBY count 1
-- (also when that exceeds maxLocks: refused attempts count too). Otherwise the window
-- restarts: HSET start ARGV[2], end ARGV[2]+ARGV[3], count 1, and EXPIRE 2*ARGV[3].
-- Returns {acquired, end, maxLocks - count}: acquired is 1 when count <= maxLocks and nil
-- otherwise; end is the stored string inside a window and an integer for a new one.

local key, micro, now, decay, max = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4]

if redis.call('exists', key) == 1 then
  local start, stop = redis.call('hget', key, 'start'), redis.call('hget', key, 'end')
  if micro >= start and micro <= stop then
    local count = redis.call('hincrby', key, 'count', 1)
    return {count <= tonumber(max), stop, max - count}
  end
end

redis.call('hset', key, 'start', now, 'end', now + decay, 'count', 1)
return {redis.call('expire', key, decay * 2), now + decay, max - 1}
