-- duration_check: read a Redis DurationLimiter window without taking a slot, the effect
-- of Illuminate\Redis\Limiters\DurationLimiter::tooManyAttempts() (8.x-13.x).
--
-- KEYS[1]  the limiter hash   PREFIX NAME
-- ARGV[1]  now with microseconds, as PHP's string form of microtime(true)
-- ARGV[2]  now, integer Unix seconds
-- ARGV[3]  the window's length in seconds (decay)
-- ARGV[4]  slots per window (maxLocks)
--
-- Effect: none.
-- Returns {end, maxLocks - count} inside a window (start <= ARGV[1] <= end, string order;
-- end as stored), else {0, ARGV[2] + ARGV[3]}. The caller has too many attempts when the
-- second element is <= 0 (PHP reads the pair as decaysAt, remaining).

local key, micro, now, decay, max = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4]

if redis.call('exists', key) == 1 then
  local start, stop = redis.call('hget', key, 'start'), redis.call('hget', key, 'end')
  if micro >= start and micro <= stop then
    return {stop, max - redis.call('hget', key, 'count')}
  end
end
return {0, now + decay}
