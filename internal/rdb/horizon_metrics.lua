-- horizon_metrics: Horizon's UpdateJobMetrics for successful jobs, the effect of its
-- updateMetrics script on one metrics hash (Horizon runs it twice per job: P queue:Q
-- with P measured_queues, then P job:NAME with P measured_jobs), once per runtime in
-- ARGV, in order: the effect of as many single calls.
--
-- KEYS[1]  metrics hash     P queue:Q or P job:NAME
-- KEYS[2]  measured set     P measured_queues or P measured_jobs
-- ARGV     the jobs' runtimes in milliseconds, as PHP prints round(ms, 2) ("0" untimed)
--
-- Effect: HSETNX KEYS[1] throughput 0; SADD KEYS[2] KEYS[1] (the member is the prefixed
-- key name, which the dashboard strips with /queue:(.*)$/); then throughput becomes n+1
-- and runtime the running mean (n * runtime + ARGV[1]) / (n + 1), or ARGV[1] when the
-- hash had no runtime yet; for each runtime in turn. The arithmetic is the same Lua
-- double arithmetic as Horizon's, on the same server, and a double survives the string
-- Redis stores between two single calls (%.17g), so the stored strings are the ones a
-- PHP worker leaves, whether the runtimes come in one call or many. One call for many
-- jobs saves the server four commands per job and hash (see HorizonBatch).
-- Returns the new throughput (a script that returns nothing answers nil, which a
-- pipeline's Exec reports as redis.Nil).

redis.call('hsetnx', KEYS[1], 'throughput', 0)
redis.call('sadd', KEYS[2], KEYS[1])
local cur = redis.call('hmget', KEYS[1], 'throughput', 'runtime')
local n = tonumber(cur[1])
local runtime = cur[2] and tonumber(cur[2])
for i = 1, #ARGV do
  local ms = tonumber(ARGV[i])
  if runtime then
    runtime = ((n * runtime) + ms) / (n + 1)
  else
    runtime = ms
  end
  n = n + 1
end
redis.call('hset', KEYS[1], 'throughput', n, 'runtime', runtime)
return n
