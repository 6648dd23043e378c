-- horizon_batch: several calls of Horizon's scripts in one script call, with the effect
-- of the separate calls in order. The Go side (horizon_batch.go) prepends the body of
-- each script as a function of its own KEYS and ARGV, in this order:
--   1 horizon_pushed   2 horizon_update   3 horizon_completed   4 horizon_failed
--   5 horizon_retry_status   6 horizon_metrics
-- so every record is written by the very code the single calls run.
--
-- KEYS     the keys of every call, one call after the other
-- ARGV[1]  n, the number of calls
-- ARGV[2 .. 1+3n]  per call: the script's number, its key count, its argument count
-- ARGV[2+3n ..]    the arguments of every call, one call after the other
--
-- A call that fails (a key of the wrong type) does not stop the others: its error is
-- caught, as a single call's error would be its own, and what it wrote before failing
-- stays written, as with a single call.
-- Returns the errors of the calls that failed, as "call I: MESSAGE" (empty: none).

local n = tonumber(ARGV[1])
local ki, ai = 1, 2 + 3 * n
local errors = {}
for c = 0, n - 1 do
  local script = hz_scripts[tonumber(ARGV[2 + 3 * c])]
  local nk, na = tonumber(ARGV[3 + 3 * c]), tonumber(ARGV[4 + 3 * c])
  local keys, args = {}, {}
  for i = 1, nk do
    keys[i] = KEYS[ki]
    ki = ki + 1
  end
  for i = 1, na do
    args[i] = ARGV[ai]
    ai = ai + 1
  end
  local ok, err = pcall(script, keys, args)
  if not ok then
    if type(err) == 'table' then
      err = err.err
    end
    errors[#errors + 1] = 'call ' .. (c + 1) .. ': ' .. tostring(err)
  end
end
return errors
