package cli

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestRedisLogLevels(t *testing.T) {
	var buf bytes.Buffer
	l := newRedisLog(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	now := time.Unix(1_000_000, 0)
	l.now = func() time.Time { return now }
	ctx := context.Background()
	master := func(addr string) { l.Printf(ctx, "sentinel: new master=%q addr=%q", "mymaster", addr) }
	master("127.0.0.1:6379")                                                                          // found at start
	l.Printf(ctx, "sentinel: selected addr=%s masterAddr=%s", "127.0.0.1:26379", "127.0.0.1:6379")    // routine
	master("127.0.0.1:6379")                                                                          // the cache's client
	master("127.0.0.1:6380")                                                                          // failover
	master("127.0.0.1:6380")                                                                          // the cache's client
	l.Printf(ctx, "redis: connection pool: failed to dial after 5 attempts: %s", "dial tcp: refused") // the command says it
	l.Printf(ctx, "redis: discarding bad PubSub connection: %s", "EOF")                               // news
	l.Printf(ctx, "redis: discarding bad PubSub connection: %s", "EOF")                               // said
	now = now.Add(2 * repeatWindow)
	l.Printf(ctx, "redis: discarding bad PubSub connection: %s", "EOF") // news again
	got := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{"DEBUG msg=\"sentinel: new master", "DEBUG msg=\"sentinel: selected", "DEBUG msg=\"sentinel: new master",
		"INFO msg=\"sentinel: new master=\\\"mymaster\\\" addr=\\\"127.0.0.1:6380", "DEBUG msg=\"sentinel: new master",
		"DEBUG msg=\"connection pool: failed to dial", "WARN msg=\"discarding bad PubSub", "DEBUG msg=\"discarding bad PubSub", "WARN msg=\"discarding bad PubSub"}
	if len(got) != len(want) {
		t.Fatalf("%d lines:\n%s", len(got), buf.String())
	}
	for i, w := range want {
		if !strings.Contains(got[i], "level="+w) || !strings.Contains(got[i], "source=go-redis") {
			t.Errorf("line %d %q, want %q", i, got[i], w)
		}
	}
}
