-- laravel_pop: the effect of Laravel's pop script (5.8+) for up to ARGV[2] jobs, in one
-- call, replying only how many it took. A yardstick, not a queue operation: it is what
-- Redis must do at the least to pop a job for Laravel (the benchmarks divide its time by
-- the jobs it popped and compare laraq's own pop with that).
--
-- KEYS[1]  ready list      PREFIX queues:NAME
-- KEYS[2]  reserved zset   PREFIX queues:NAME:reserved
-- KEYS[3]  notify list     PREFIX queues:NAME:notify
-- ARGV[1]  reservation expiry, integer Unix seconds
-- ARGV[2]  how many jobs to take at most (>= 1)
--
-- Per job, as Laravel's script does once per call: LPOP the ready list, cjson-decode the
-- payload, add one to its attempts, cjson-encode it, ZADD that copy to the reserved zset
-- with score ARGV[1], LPOP one notify token. A payload cjson cannot reserve raises the
-- script's error, as in Laravel (the job is lost then: never run it on real queues).
--
-- Returns the number of jobs taken.

local taken = 0
for _ = 1, tonumber(ARGV[2]) do
  local job = redis.call('lpop', KEYS[1])
  if not job then
    break
  end
  local payload = cjson.decode(job)
  payload['attempts'] = payload['attempts'] + 1
  redis.call('zadd', KEYS[2], ARGV[1], cjson.encode(payload))
  redis.call('lpop', KEYS[3])
  taken = taken + 1
end
return taken
