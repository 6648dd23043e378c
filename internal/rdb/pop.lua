-- pop: reserve jobs from the head of a ready list, the effect of Laravel's pop script
-- (5.8+) for every job it reserves.
--
-- KEYS[1]  ready list      PREFIX queues:NAME
-- KEYS[2]  reserved zset   PREFIX queues:NAME:reserved
-- KEYS[3]  notify list     PREFIX queues:NAME:notify
-- KEYS[4]  invalid list    PREFIX queues:NAME:invalid   (laraq only)
-- KEYS[5]  optional ticket PREFIX queues:NAME:laraq-pop:OWNER  (laraq only)
-- ARGV[1]  reservation expiry, integer Unix seconds (now + retry_after)
-- ARGV[2]  how many jobs to take at most (>= 1)
-- ARGV[3]  with KEYS[5]: the request's sequence number (>= 1), increasing per owner
-- ARGV[4]  with KEYS[5]: seconds the ticket is kept
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
-- The ticket makes a pop safe to send again. A reply can be lost after the script ran
-- (a timeout while Redis stalls, a dropped connection), and a client may re-send the
-- call on a new connection while the first copy still waits in the server's buffer:
-- without a ticket each copy reserves jobs nobody runs. With one, the script keeps its
-- reply under the ticket key: a call with the same sequence number gets that reply
-- again and pops nothing; a call with a lower one (a stale copy arriving after a later
-- request) gets an empty reply and pops nothing. The key holds "SEQ\n" followed by the
-- reply, each element as LENGTH ":" BYTES, or "~" for nil.
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

local function unpack(s, pos)
  local out = {}
  while pos <= #s do
    if string.sub(s, pos, pos) == '~' then
      out[#out + 1] = false
      pos = pos + 1
    else
      local colon = string.find(s, ':', pos, true)
      local n = tonumber(string.sub(s, pos, colon - 1))
      out[#out + 1] = string.sub(s, colon + 1, colon + n)
      pos = colon + n + 1
    end
  end
  return out
end

local ticket = KEYS[5]
local seq
if ticket then
  seq = tonumber(ARGV[3])
  local kept = redis.call('get', ticket)
  if kept then
    local nl = string.find(kept, '\n', 1, true)
    local last = tonumber(string.sub(kept, 1, nl - 1))
    if seq == last then
      return unpack(kept, nl + 1)
    elseif seq < last then
      return {}
    end
  end
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

if ticket then
  local parts = {ARGV[3], '\n'}
  for i = 1, #out do
    if out[i] then
      parts[#parts + 1] = #out[i] .. ':' .. out[i]
    else
      parts[#parts + 1] = '~'
    end
  end
  redis.call('set', ticket, table.concat(parts), 'EX', ARGV[4])
end
return out
