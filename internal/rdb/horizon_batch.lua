-- horizon_batch: several calls of Horizon's scripts in one script call, with the effect
-- of the separate calls in order. The Go side (horizon_batch.go) prepends the body of
-- each script as a function of its own KEYS and ARGV, in this order:
--   1 horizon_pushed   2 horizon_update   3 horizon_completed   4 horizon_failed
--   5 horizon_retry_status   6 horizon_metrics
-- so every record is written by the very code the single calls run; horizon_completed's
-- function hz_completed comes first, at the top.
--
-- KEYS     the keys of every call, one call after the other
-- ARGV[1]  n, the number of calls
-- ARGV[2 .. 1+3n]  per call: the script's number, its key count, its argument count
-- ARGV[2+3n ..]    the arguments of every call, one call after the other
--
-- Number 7 is a group of horizon_completed calls that share every key and argument but
-- the job's own: hz_completed runs once per job, in order, with
--   KEYS  recent jobs, pending jobs, finished list, monitored jobs, monitored tags, then
--         each job's hash
--   ARGV  connection, queue, displayName, pending, completed and monitored expiry,
--         reserved flag; then per job: id, payload, T, -T, tag count, the tags
-- which are horizon_completed's KEYS and ARGV of each job, sent once for all.
--
-- A call that fails (a key of the wrong type) does not stop the others: its error is
-- caught, as a single call's error would be its own, and what it wrote before failing
-- stays written, as with a single call; in a group, each job is a call of its own.
-- Returns the errors of the calls that failed, as "call I: MESSAGE" (empty: none).

local errors = {}

local function completed_group(c, ki, nk, ai)
  local recent, pending, finished = KEYS[ki], KEYS[ki + 1], KEYS[ki + 2]
  local monitored, monitoring = KEYS[ki + 3], KEYS[ki + 4]
  local connection, queue, name = ARGV[ai], ARGV[ai + 1], ARGV[ai + 2]
  local pendingAt, completedAt, monitoredAt, reserve = ARGV[ai + 3], ARGV[ai + 4], ARGV[ai + 5], ARGV[ai + 6]
  local a = ai + 7
  for k = ki + 5, ki + nk - 1 do
    local ntags = tonumber(ARGV[a + 4])
    local ok, err = pcall(hz_completed, KEYS[k], recent, pending, finished, monitored, monitoring,
      ARGV[a], connection, queue, name, ARGV[a + 1], ARGV[a + 2], ARGV[a + 3],
      pendingAt, completedAt, monitoredAt, reserve, ARGV, a + 5, a + 4 + ntags)
    if not ok then
      if type(err) == 'table' then
        err = err.err
      end
      errors[#errors + 1] = 'call ' .. c .. ' job ' .. (k - ki - 4) .. ': ' .. tostring(err)
    end
    a = a + 5 + ntags
  end
end

local n = tonumber(ARGV[1])
local ki, ai = 1, 2 + 3 * n
for c = 0, n - 1 do
  local number = tonumber(ARGV[2 + 3 * c])
  local nk, na = tonumber(ARGV[3 + 3 * c]), tonumber(ARGV[4 + 3 * c])
  if number == 7 then
    completed_group(c + 1, ki, nk, ai)
  else
    local keys, args = {}, {}
    for i = 1, nk do
      keys[i] = KEYS[ki + i - 1]
    end
    for i = 1, na do
      args[i] = ARGV[ai + i - 1]
    end
    local ok, err = pcall(hz_scripts[number], keys, args)
    if not ok then
      if type(err) == 'table' then
        err = err.err
      end
      errors[#errors + 1] = 'call ' .. (c + 1) .. ': ' .. tostring(err)
    end
  end
  ki, ai = ki + nk, ai + na
end
return errors
