-- horizon_metrics: Horizon's UpdateJobMetrics for one successful job, the effect of its
-- updateMetrics script on one metrics hash (Horizon runs it twice: P queue:Q with
-- P measured_queues, then P job:NAME with P measured_jobs).
--
-- KEYS[1]  metrics hash     P queue:Q or P job:NAME
-- KEYS[2]  measured set     P measured_queues or P measured_jobs
-- ARGV[1]  the job's runtime in milliseconds, as PHP prints round(ms, 2) ("0" untimed)
--
-- Effect: HSETNX KEYS[1] throughput 0; SADD KEYS[2] KEYS[1] (the member is the prefixed
-- key name, which the dashboard strips with /queue:(.*)$/); then throughput becomes n+1
-- and runtime the running mean (n * runtime + ARGV[1]) / (n + 1), or ARGV[1] when the
-- hash had no runtime yet. The arithmetic is the same Lua double arithmetic as Horizon's,
-- on the same server, so the stored strings are the ones a PHP worker leaves.
-- Returns the new throughput (a script that returns nothing answers nil, which a
-- pipeline's Exec reports as redis.Nil).

redis.call('hsetnx', KEYS[1], 'throughput', 0)
redis.call('sadd', KEYS[2], KEYS[1])
local cur = redis.call('hmget', KEYS[1], 'throughput', 'runtime')
local n = tonumber(cur[1])
local ms = tonumber(ARGV[1])
local runtime = ms
if cur[2] then
  runtime = ((n * tonumber(cur[2])) + ms) / (n + 1)
end
redis.call('hset', KEYS[1], 'throughput', n + 1, 'runtime', runtime)
return n + 1
