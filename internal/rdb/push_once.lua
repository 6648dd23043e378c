-- push_once: make one payload ready unless a push with the same guard already did.
--
-- KEYS[1]  ready list      PREFIX queues:NAME
-- KEYS[2]  notify list     PREFIX queues:NAME:notify
-- KEYS[3]  guard           PREFIX queues:NAME:laraq-push:ID   (laraq only)
-- ARGV[1]  the payload
-- ARGV[2]  seconds the guard is kept
--
-- Effect: when KEYS[3] does not exist, it is set (with a TTL of ARGV[2]) and the payload
-- is pushed as push.lua pushes one; otherwise nothing. A push that must be retried after
-- an error (its reply lost, or go-redis re-sending it on a new connection) cannot then
-- make the job ready twice. Returns 1 when pushed, 0 when the guard was there.
--
-- A ready or notify list of the wrong type fails the push before the guard is set
-- (key_types.lua, prepended): a guard set by a push that then failed would make its
-- retry answer "already pushed", and the job would be lost.

local bad = wrong_type(KEYS[1], 'list') or wrong_type(KEYS[2], 'list')
if bad then
  return bad
end
if not redis.call('set', KEYS[3], '1', 'NX', 'EX', ARGV[2]) then
  return 0
end
redis.call('rpush', KEYS[1], ARGV[1])
redis.call('rpush', KEYS[2], '1')
return 1
