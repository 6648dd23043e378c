-- pop: reserve jobs from the head of a ready list, the effect of Laravel's pop script
-- (5.8+) for every job it reserves.
--
-- KEYS[1]  ready list      PREFIX queues:NAME
-- KEYS[2]  reserved zset   PREFIX queues:NAME:reserved
-- KEYS[3]  notify list     PREFIX queues:NAME:notify
-- KEYS[4]  invalid list    PREFIX queues:NAME:invalid   (laraq only)
-- ARGV[1]  reservation expiry, integer Unix seconds (now + retry_after)
-- ARGV[2]  how many jobs to take at most (>= 1)
--
-- For each job taken: the payload is decoded with cjson, its attempts field increased by
-- one (numeric strings coerce: "2" becomes 3) and encoded again with cjson; that copy
-- (the "reserved" payload: keys reordered, [] as {}, numbers in %.14g, / as \/) is added
-- to the reserved zset with score ARGV[1]; the job leaves the ready list; one notify
-- token is consumed. Identical to Laravel's effects.
--
-- A payload Laravel's script would fail on (not JSON, not an object, attempts missing or
-- not numeric) is lost there: the LPOP has already happened when the script errors.
-- Here it is moved whole to the invalid list instead (and its notify token consumed),
-- and reported with the reason. The ready list is only changed after the reserved or
-- invalid copy has been written, so an error never loses a job.
--
-- Returns a flat array of triples {job, reserved, reason}, one per job taken, in pop
-- order: job is the payload exactly as it was in the ready list; reserved is the
-- re-encoded copy (nil when the job was invalid); reason is nil, or the error text for
-- an invalid job. An empty array when the ready list is empty.

local function reserve(job)
  local payload = cjson.decode(job)
  payload['attempts'] = payload['attempts'] + 1
  return cjson.encode(payload)
end

local out = {}
local max = tonumber(ARGV[2])
for _ = 1, max do
  local job = redis.call('lindex', KEYS[1], 0)
  if not job then
    break
  end
  local ok, reserved = pcall(reserve, job)
  if ok then
    redis.call('zadd', KEYS[2], ARGV[1], reserved)
    out[#out + 1] = job
    out[#out + 1] = reserved
    out[#out + 1] = false
  else
    redis.call('rpush', KEYS[4], job)
    out[#out + 1] = job
    out[#out + 1] = false
    out[#out + 1] = tostring(reserved)
  end
  redis.call('lpop', KEYS[1])
  redis.call('lpop', KEYS[3])
end
return out
