package rdb

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// Every Lua script laraq runs is one embedded file of this package; each file's header
// says its KEYS, ARGV, effect and reply. redis.Script.Run sends EVALSHA and falls back to
// EVAL when the server answers NOSCRIPT, so each script body crosses the wire once per
// server (and again only after SCRIPT FLUSH or a restart). On a Cluster client the command
// is routed by its first key; all keys of one call belong to one queue, which share a
// slot when the queue name carries a hash tag (Options.ClusterHashTags).

var (
	//go:embed key_types.lua
	keyTypesSrc string
	//go:embed push.lua
	pushSrc string
	//go:embed pop.lua
	popBody string
	//go:embed migrate.lua
	migrateBody string
	//go:embed release.lua
	releaseBody string
	//go:embed unreserve.lua
	unreserveBody string
	//go:embed sizes.lua
	sizesSrc string
	//go:embed clear.lua
	clearSrc string
	//go:embed extend.lua
	extendSrc string
	//go:embed requeue_invalid.lua
	requeueInvalidSrc string
	//go:embed push_once.lua
	pushOnceBody string
)

// The scripts that write more than one key of a queue start with key_types.lua's
// functions, which make a key of the wrong type fail them before their first write.
var (
	popSrc       = keyTypesSrc + popBody
	migrateSrc   = keyTypesSrc + migrateBody
	releaseSrc   = keyTypesSrc + releaseBody
	unreserveSrc = keyTypesSrc + unreserveBody
	pushOnceSrc  = keyTypesSrc + pushOnceBody
)

var (
	pushScript      = redis.NewScript(pushSrc)
	popScript       = redis.NewScript(popSrc)
	migrateScript   = redis.NewScript(migrateSrc)
	releaseScript   = redis.NewScript(releaseSrc)
	unreserveScript = redis.NewScript(unreserveSrc)
	sizesScript     = redis.NewScript(sizesSrc)
	clearScript     = redis.NewScript(clearSrc)
	extendScript    = redis.NewScript(extendSrc)

	requeueInvalidScript = redis.NewScript(requeueInvalidSrc)
	pushOnceScript       = redis.NewScript(pushOnceSrc)
)

// allScripts lists every script, for LoadScripts.
var allScripts = []*redis.Script{
	pushScript, popScript, migrateScript, releaseScript, unreserveScript, sizesScript, clearScript, extendScript,
	requeueInvalidScript, pushOnceScript,
	cacheAddScript, durationAcquireScript, durationCheckScript,
}
