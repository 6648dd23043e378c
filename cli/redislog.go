package cli

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"time"
)

// redisLog is what the CLI installs as go-redis' logger (redis.SetLogger, which is
// global to the process: the library never sets it, a program that wants go-redis'
// lines routed chooses for itself). It writes each line into the command's log at the
// level its news deserves:
//
//   - a Sentinel master that changed address (a failover) at info, once: the queue's and
//     the cache's clients (two databases, two clients) each announce it, and go-redis
//     also announces the master it first finds, which the start line already names
//     (debug);
//   - a Sentinel discovered at info, once;
//   - which Sentinel a client picked, "ignore addr", a Sentinel query cancelled because
//     another answered first, and failed dials (the command's own error says it) at
//     debug;
//   - everything else (pool trouble, a Sentinel that fails) at warn; a line said again
//     within repeatWindow at debug.
type redisLog struct {
	logger *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	seen    map[string]time.Time
	masters map[string]string // Sentinel master name -> the address last announced
}

// repeatWindow is how long a go-redis line counts as said.
const repeatWindow = time.Minute

func newRedisLog(logger *slog.Logger) *redisLog {
	return &redisLog{logger: logger, now: time.Now, seen: map[string]time.Time{}, masters: map[string]string{}}
}

// newMaster reads go-redis' "sentinel: new master=%q addr=%q".
var newMaster = regexp.MustCompile(`^sentinel: new master="(.*)" addr="(.*)"$`)

// Printf implements go-redis' internal.Logging.
func (l *redisLog) Printf(ctx context.Context, format string, v ...any) {
	msg := strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: ")
	level := slog.LevelWarn
	if m := newMaster.FindStringSubmatch(msg); m != nil {
		level = l.master(m[1], m[2])
	} else {
		switch {
		case strings.HasPrefix(msg, "sentinel: discovered new sentinel"):
			level = slog.LevelInfo
		case strings.HasPrefix(msg, "sentinel: selected addr"), strings.HasPrefix(msg, "sentinel: ignore addr"),
			strings.HasPrefix(msg, "sentinel: GetMasterAddrByName") && strings.HasSuffix(msg, "context canceled"),
			strings.HasPrefix(msg, "connection pool: failed to dial"):
			level = slog.LevelDebug
		}
		if l.repeated(msg) {
			level = slog.LevelDebug
		}
	}
	l.logger.Log(ctx, level, msg, "source", "go-redis")
}

// master is the level of a new-master notice: info when the address changed.
func (l *redisLog) master(name, addr string) slog.Level {
	l.mu.Lock()
	defer l.mu.Unlock()
	before, known := l.masters[name]
	l.masters[name] = addr
	if !known || before == addr {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// repeated reports whether msg was said within repeatWindow, and remembers it.
func (l *redisLog) repeated(msg string) bool {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.seen) > 256 {
		for m, at := range l.seen {
			if now.Sub(at) > repeatWindow {
				delete(l.seen, m)
			}
		}
	}
	at, ok := l.seen[msg]
	if ok && now.Sub(at) <= repeatWindow {
		return true
	}
	l.seen[msg] = now
	return false
}
