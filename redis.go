package laraq

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/rdb"
)

// RedisAuthError is Redis refusing a connection's credentials (a wrong or missing
// password, a disabled ACL user). Retrying cannot help: the worker stops with it and
// commands fail at once. Server names the server (host:port and database), never the
// secret.
type RedisAuthError = rdb.AuthError

// RedisConfigError is Redis refusing laraq for a reason of its setup that no retry
// heals. Its Reason is one of the ErrRedis… errors below, which errors.Is tells apart;
// its message names the server (never the credentials), the queue and key where they
// are known, and the fix (Fix). A worker stops with it at first sight (READONLY after a
// pop succeeded is retried for WorkerConfig.ReadOnlyGrace first, as a failover in
// progress), except ErrRedisWrongType, which skips the queue concerned; ExitStatus
// gives 3. docs/operations.md lists each with its fix.
type RedisConfigError = rdb.ConfigError

// The reasons of a *RedisConfigError.
var (
	// ErrRedisReadOnly: the server is a replica (READONLY). Point laraq at the master, or
	// reach it through Sentinel.
	ErrRedisReadOnly = rdb.ErrReadOnly
	// ErrRedisCrossSlot: on a Redis Cluster the keys of a queue whose name has no hash
	// tag are in different slots (CROSSSLOT), as with Laravel ≤13.4. Name the queue
	// {NAME}, or, on Laravel 13.5+, set Connection.HashTags.
	ErrRedisCrossSlot = rdb.ErrCrossSlot
	// ErrRedisNoPermission: the ACL user may not run a command laraq needs, or reach a
	// queue's keys (NOPERM); RedisConfigError.Command names the command when Redis did.
	// Grant it.
	ErrRedisNoPermission = rdb.ErrNoPermission
	// ErrRedisUnknownCommand: the server, or a proxy before it, lacks a command laraq
	// needs (EVALSHA, BLPOP, ...).
	ErrRedisUnknownCommand = rdb.ErrUnknownCommand
	// ErrRedisNoScript: the server answers NOSCRIPT even to EVAL: a proxy that sends
	// EVALSHA and EVAL to different servers.
	ErrRedisNoScript = rdb.ErrNoScript
	// ErrRedisWrongType: a key of a queue holds another type than Laravel's (a string
	// where the :notify list should be); RedisConfigError.Key and Type name it. The
	// worker skips that queue (EventQueueSkipped) and resumes it by itself once the key
	// is repaired; nothing is deleted.
	ErrRedisWrongType = rdb.ErrWrongType
)

// ServerOf names the Redis server(s) a client talks to, without credentials:
// "127.0.0.1:6379/0", "cluster 10.0.0.1:7000,10.0.0.2:7000", "sentinel master mymaster
// via 10.0.0.1:26379,10.0.0.2:26379/0" (a client with a ServerName method names itself).
func ServerOf(c redis.UniversalClient) string { return rdb.ServerOf(c) }

// credentialsTimeout bounds CheckCredentials' wait for a server that does not answer.
const credentialsTimeout = 2 * time.Second

// CheckCredentials pings the connection's Redis servers (the queue's and the cache's)
// and returns a *RedisAuthError when one refuses the credentials. Any other error, such
// as a server not answering yet, is not reported: a worker waits for Redis to come back.
func (c *Connection) CheckCredentials(ctx context.Context) error {
	clients := []redis.UniversalClient{c.Client}
	if c.Cache.Client != nil && c.Cache.Client != c.Client {
		clients = append(clients, c.Cache.Client)
	}
	ctx, cancel := context.WithTimeout(ctx, credentialsTimeout)
	defer cancel()
	for _, cl := range clients {
		if cl == nil {
			continue
		}
		if err := rdb.AuthErrorOf(cl, cl.Ping(ctx).Err()); err != nil && rdb.IsAuthError(err) {
			return err
		}
	}
	return nil
}

// RedisLog routes go-redis' own log lines (dial failures, pool and connection notices)
// to a slog.Logger at level Warn, so that they take the worker log's format instead of
// bypassing it on stderr. go-redis has one logger per process, which only a program may
// set (laraq itself never does); install it with
//
//	redis.SetLogger(laraq.RedisLog{Logger: logger})
//
// The `laraq` command does this for every command.
type RedisLog struct {
	Logger *slog.Logger
}

// Printf implements go-redis' internal.Logging.
func (l RedisLog) Printf(ctx context.Context, format string, v ...any) {
	if l.Logger == nil {
		return
	}
	msg := strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: ")
	l.Logger.WarnContext(ctx, msg, "source", "go-redis")
}
