-- extend: move a reservation's expiry, only while the reservation is still held.
--
-- KEYS[1]  reserved zset   PREFIX queues:NAME:reserved
-- ARGV[1]  the reserved payload, byte for byte as the pop script returned it
-- ARGV[2]  the new expiry, integer Unix seconds
--
-- Effect: when ARGV[1] is a member of KEYS[1], its score becomes ARGV[2]; otherwise
-- nothing (ZADD XX could not tell a missing member from an unchanged score).
-- Returns 1 when the member was there, 0 otherwise.

if redis.call('zscore', KEYS[1], ARGV[1]) then
  redis.call('zadd', KEYS[1], ARGV[2], ARGV[1])
  return 1
end
return 0
