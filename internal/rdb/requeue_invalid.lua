-- requeue_invalid: move payloads from a queue's invalid list back to its ready list.
--
-- KEYS[1]  invalid list    PREFIX queues:NAME:invalid   (laraq only)
-- KEYS[2]  ready list      PREFIX queues:NAME
-- KEYS[3]  notify list     PREFIX queues:NAME:notify
-- ARGV[1]  how many payloads to move at most (>= 1)
--
-- Effect: the oldest ARGV[1] payloads of KEYS[1] leave it and are RPUSHed, byte for
-- byte and in order, to KEYS[2], each with one "1" token on KEYS[3], as a push makes
-- them ready. Returns how many moved; 0 when the invalid list is empty.

local jobs = redis.call('lrange', KEYS[1], 0, tonumber(ARGV[1]) - 1)
for _, job in ipairs(jobs) do
  redis.call('rpush', KEYS[2], job)
  redis.call('rpush', KEYS[3], 1)
end
if #jobs > 0 then
  redis.call('ltrim', KEYS[1], #jobs, -1)
end
return #jobs
