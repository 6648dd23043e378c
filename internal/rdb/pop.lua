-- pop: reserve jobs from the head of a ready list, the effect of Laravel's pop script
-- (5.8+) for every job it reserves.
--
-- KEYS[1]  ready list      PREFIX queues:NAME
-- KEYS[2]  reserved zset   PREFIX queues:NAME:reserved
-- KEYS[3]  notify list     PREFIX queues:NAME:notify
-- KEYS[4]  invalid list    PREFIX queues:NAME:invalid   (laraq only)
-- KEYS[5]  optional ticket PREFIX queues:NAME:laraq-pop:OWNER  (laraq only)
-- ARGV[1]  reservation expiry, integer Unix seconds (now + retry_after)
-- ARGV[2]  how many jobs to take at most (1 to 1000: the arguments of one ZADD)
-- ARGV[3]  with KEYS[5]: the request's sequence number (>= 1), increasing per owner
-- ARGV[4]  with KEYS[5]: seconds the ticket is kept
--
-- For each job taken: the payload is decoded with cjson, its attempts field increased by
-- one (numeric strings coerce: "2" becomes 3) and encoded again with cjson; that copy
-- (the "reserved" payload: keys reordered, [] as {}, numbers in %.14g, / as \/) is added
-- to the reserved zset with score ARGV[1]; the job leaves the ready list; one notify
-- token is consumed. Identical to Laravel's effects: n jobs taken in one call leave the
-- state n calls of Laravel's script leave. The jobs are read with one LRANGE, reserved
-- with one ZADD and removed with one LTRIM of each list, because a command called from
-- Lua costs about as much as decoding a job: per job, only cjson's work is left.
--
-- A payload Laravel's script would fail on (not JSON, not an object, attempts missing or
-- not numeric) is lost there: the LPOP has already happened when the script errors.
-- Here it is moved whole to the invalid list instead (and its notify token consumed),
-- and reported with the reason. The ready list is only trimmed after the reserved and
-- invalid copies have been written, so an error never loses a job.
--
-- The ticket makes a pop safe to send again. A reply can be lost after the script ran
-- (a timeout while Redis stalls, a dropped connection), and a client may re-send the
-- call on a new connection while the first copy still waits in the server's buffer:
-- without a ticket each copy reserves jobs nobody runs. With one, the script keeps under
-- the ticket key the list {SEQ, job, job, ...}: the sequence number and the jobs it took,
-- as they were in the ready list. A call with the same sequence number pops nothing and
-- replies with those jobs again, each with its reserved copy re-derived (cjson gives the
-- same bytes for the same payload) and only while that copy is still reserved: a job
-- whose reservation expired and was migrated back belongs to whoever pops it next.
-- Invalid jobs are replied again with their reason. A call with a lower sequence number
-- (a stale copy arriving after a later request) gets an empty reply and pops nothing.
-- Only the jobs' original bytes are kept, passed from LRANGE's reply to RPUSH: no string
-- is built in Lua.
--
-- Returns a flat array of triples {job, reserved, reason}, one per job taken, in pop
-- order: job is the payload exactly as it was in the ready list; reserved is the
-- re-encoded copy (false, a nil reply, when the job was invalid); reason is false, or the
-- error text for an invalid job. An empty array when the ready list is empty.
--
-- A key of the wrong type (see key_types.lua, prepended) fails the pop before its first
-- write with "WRONGTYPE KEY holds a TYPE, not a WANT": the ready list and the reserved
-- zset through their first command (LRANGE, and ZADD, the first write), the notify list
-- by a TYPE before that write when jobs were taken, the invalid list too when one of them
-- is invalid. The ticket is laraq's own key. So a pop that fails has changed nothing.

local function reserve(job)
  local payload = cjson.decode(job)
  payload['attempts'] = payload['attempts'] + 1
  return cjson.encode(payload)
end

local ticket = KEYS[5]
if ticket then
  local last = tonumber(redis.call('lindex', ticket, 0))
  if last then
    local seq = tonumber(ARGV[3])
    if seq < last then
      return {}
    end
    if seq == last then
      local out = {}
      for _, job in ipairs(redis.call('lrange', ticket, 1, -1)) do
        local ok, reserved = pcall(reserve, job)
        if not ok then
          out[#out + 1] = job
          out[#out + 1] = false
          out[#out + 1] = tostring(reserved)
        elseif redis.call('zscore', KEYS[2], reserved) then
          out[#out + 1] = job
          out[#out + 1] = reserved
          out[#out + 1] = false
        end
      end
      return out
    end
  end
end

local jobs = redis.pcall('lrange', KEYS[1], 0, tonumber(ARGV[2]) - 1)
if jobs.err then
  return refused(jobs, KEYS[1], 'list')
end
local n = #jobs
local out, zadd, invalid = {}, {}, {}
for i = 1, n do
  local job = jobs[i]
  local ok, reserved = pcall(reserve, job)
  out[#out + 1] = job
  if ok then
    zadd[#zadd + 1] = ARGV[1]
    zadd[#zadd + 1] = reserved
    out[#out + 1] = reserved
    out[#out + 1] = false
  else
    invalid[#invalid + 1] = job
    out[#out + 1] = false
    out[#out + 1] = tostring(reserved)
  end
end

if n > 0 then
  local bad = wrong_type(KEYS[3], 'list') or (#invalid > 0 and wrong_type(KEYS[4], 'list'))
  if bad then
    return bad
  end
end
if #zadd > 0 then
  local added = redis.pcall('zadd', KEYS[2], unpack(zadd))
  if type(added) == 'table' then
    return refused(added, KEYS[2], 'zset')
  end
end
if #invalid > 0 then
  redis.call('rpush', KEYS[4], unpack(invalid))
end
if n > 0 then
  redis.call('ltrim', KEYS[1], n, -1)
  redis.call('ltrim', KEYS[3], n, -1)
end

if ticket then
  redis.call('del', ticket)
  redis.call('rpush', ticket, ARGV[3], unpack(jobs))
  redis.call('expire', ticket, ARGV[4])
end
return out
