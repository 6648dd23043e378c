// Package rdb owns laraq's Redis wire: every key name (keys.go) and every Lua script
// (one embedded *.lua file each, with a header saying KEYS, ARGV, effect and reply), and
// the operations built on them. Nothing else in laraq builds a key string or a script.
//
// # The wire facts it keeps
//
// Laravel's Redis queue is four keys per queue: the ready list `queues:NAME`, the zsets
// `queues:NAME:delayed` (score = available-at) and `queues:NAME:reserved` (score =
// reservation expiry), and the list `queues:NAME:notify`. Each operation here has the same
// effect on them as the matching Laravel script or command; the tests compare the whole key
// state with Laravel 8's own RedisQueue, through phpredis and predis, on a real
// redis-server.
//
// Exact bytes. The pop script decodes the job with Redis' bundled cjson, adds one to
// `attempts` and encodes it again. That reserved copy differs from the pushed payload (keys
// reordered, `[]` as `{}`, 15+ digit numbers in %.14g form, `/` as `\/`) and is the member
// of the reserved zset, so DeleteReserved and Release need it byte for byte: a Go
// re-encoding of the same data removes nothing. The re-encoding must happen in Redis, which
// is why Pop is a script and not Go code. Pop returns both the original and the reserved
// bytes; failed-job records use the original.
//
// Notify tokens are 1:1. Every job made ready pushes one "1" to the notify list (Push,
// PushBulk, each job a migration moves, Unreserve) and every job taken pops one (Pop, and
// the BLPOP of BlockForNotify). PHP workers with block_for wait on that list, so a
// dispatcher that skips the token leaves them sleeping, and a consumer that skips the pop
// grows the list forever.
//
// Prefixes on KEYS. The Redis connection prefix (`laravel_database_`, `laravel-database-`
// or none) is added by PHP's client to every key, including the KEYS of EVAL, so laraq
// adds it to every key name it passes; the scripts never build a name. Cache keys get two
// prefixes: the cache connection's Redis prefix and the cache store prefix, with ":"
// between store prefix and key on Laravel ≤10 (CacheKeys). A Cache can read the restart
// and pause signals under several such schemes at once (CacheOptions.AlsoWatch), for an
// application whose version is only guessed; it writes under its own scheme only.
//
// Hash tags. A script touches several keys of one queue; on Redis Cluster they must share
// a slot. go-redis routes EVALSHA by its first key, and the server refuses keys of
// different slots (CROSSSLOT). Options.ClusterHashTags wraps a name without a tag as
// `queues:{NAME}` like Laravel 13.5+; names that already carry one (`{default}`, the
// ≤13.4 convention) are used as they are.
//
// # Where laraq differs from Laravel, on purpose
//
// A payload Laravel's pop script fails on (no numeric `attempts`, not a JSON object) is
// lost in Laravel: the LPOP has happened when the script errors. Pop moves it unchanged to
// `queues:NAME:invalid` instead and returns an *InvalidJobError. Release only adds the job
// to the delayed zset if it was still reserved; Laravel adds it anyway, duplicating a job
// whose reservation expired and was migrated back. Unreserve (give a reserved job back
// without spending the attempt) is laraq's own.
//
// A key of a queue that holds another type (a :notify list someone overwrote with a
// string) fails Laravel's scripts after some of their writes, which Redis does not undo:
// a pop reserves the job and counts its attempt, a migration drops the jobs it took. The
// scripts here check the keys they write before their first write (key_types.lua) and
// fail with "WRONGTYPE KEY holds a TYPE, not a WANT", having changed nothing.
//
// # Refusals no retry heals
//
// READONLY (a replica), CROSSSLOT (a Cluster and a queue name without hash tag), NOPERM
// (an ACL user denied a command or key), an unknown command, NOSCRIPT after the EVAL
// fallback and WRONGTYPE come back from the queue operations as a *ConfigError naming
// the server, the queue, the key (and its type) and the fix; errors.Is tells the reasons
// apart (ErrReadOnly, ...). Refused credentials are an *AuthError; out of memory
// (IsOutOfMemory) heals by itself.
//
// Timestamps are integer Unix seconds passed in by the caller, which owns the clock.
// Scripts run with EVALSHA and fall back to EVAL after NOSCRIPT (redis.Script.Run).
package rdb
