-- key_types: two functions prepended to every script that writes more than one key of a
-- queue (pop, migrate, release, unreserve, push_once), so that a key holding the wrong type fails
-- the script before its first write, with an error naming the key. Redis does not undo
-- the writes a failing script made before the failing command: without the check, a
-- :notify list overwritten with a string failed the pop after the job had been moved to
-- :reserved with its attempt counted, and a broken ready list made a migration drop the
-- jobs it had taken from :delayed.
--
-- wrong_type(key, want)      nil when key holds want (TYPE) or does not exist; else the
--                            error reply "WRONGTYPE KEY holds a TYPE, not a WANT"
-- refused(reply, key, want)  the error reply to return for reply, the error table a
--                            redis.pcall of a command on key returned: named by
--                            wrong_type for a WRONGTYPE, as it is otherwise (OOM,
--                            READONLY, NOPERM keep their code)
--
-- A script calls wrong_type on each key it writes after its first write, and runs its
-- first command on each other key with redis.pcall: a command that fails before anything
-- was written changes nothing, so only the error needs naming.

local function wrong_type(key, want)
  local t = redis.call('type', key)['ok']
  if t == want or t == 'none' then
    return nil
  end
  return redis.error_reply('WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want)
end

local function refused(reply, key, want)
  if string.sub(reply.err, 1, 10) == 'WRONGTYPE ' then
    return wrong_type(key, want) or reply
  end
  return reply
end

