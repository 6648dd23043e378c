-- push: make payloads ready, the effect of Laravel's push script (5.8+) once per payload.
--
-- KEYS[1]  ready list      PREFIX queues:NAME
-- KEYS[2]  notify list     PREFIX queues:NAME:notify
-- ARGV     one or more payloads, in the order they must be popped
--
-- Effect: RPUSH ready <payloads in order>; RPUSH notify "1" once per payload.
-- Pushing several payloads in one script makes a batch all-or-nothing, the effect of
-- Laravel's bulk() (its pushes inside MULTI/EXEC). Payloads are pushed in slices of
-- 100 to stay well inside Lua's stack for unpack().
-- Returns the number of payloads pushed.

local n = #ARGV
local ones = {}
for i = 1, math.min(n, 100) do
  ones[i] = '1'
end
for first = 1, n, 100 do
  local last = math.min(first + 99, n)
  redis.call('rpush', KEYS[1], unpack(ARGV, first, last))
  redis.call('rpush', KEYS[2], unpack(ones, 1, last - first + 1))
end
return n
