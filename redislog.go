package laraq

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// RedisLog routes go-redis' own log lines (dial failures, pool and connection notices)
// to a slog.Logger at level Warn, so that they take the worker log's format instead of
// bypassing it on stderr. go-redis has one logger per process; install it with
//
//	redis.SetLogger(laraq.RedisLog{Logger: logger})
//
// `laraq` does this for every command.
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
