package rdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/testenv"
)

// The pop sends its own EVALSHA and reads views of its reply: it must work whichever
// protocol the caller's client speaks, after the server forgot the script (the EVAL
// fallback), and report a script error as an error without touching the queue.
func TestPopReplyOverProtocols(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprintf("RESP%d", proto), func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, Protocol: proto})
			t.Cleanup(func() { c.Close() })
			prefix := testenv.Prefix(t)
			r, err := New(c, Options{Prefix: prefix})
			mustNoErr(t, err)
			t.Cleanup(func() { cleanupKeys(c, prefix) })
			mustNoErr(t, r.PushBulk(ctx, "q", toBytes([]string{sampleS8, "not json", ""})))
			mustNoErr(t, c.ScriptFlush(ctx).Err())
			jobs, err := r.PopTicket(ctx, "q", until, 5, Ticket{Owner: "w", Seq: 1, Keep: 60e9})
			mustNoErr(t, err)
			if len(jobs) != 3 || string(jobs[0].Reserved) != sampleS8r || jobs[1].Invalid == nil || jobs[1].Invalid.Reason == "" ||
				jobs[2].Job == nil || len(jobs[2].Job) != 0 || jobs[2].Invalid == nil {
				t.Fatalf("popped %+v", jobs)
			}
			// A reserved zset of the wrong type makes the script fail: nothing is popped.
			mustNoErr(t, r.Push(ctx, "bad", []byte(sampleS8)))
			mustNoErr(t, c.Set(ctx, r.Keys("bad").Reserved, "x", 0).Err())
			_, err = r.PopMany(ctx, "bad", until, 1)
			var re redis.Error
			if !errors.As(err, &re) || !strings.Contains(err.Error(), "WRONGTYPE") {
				t.Fatalf("pop with a broken reserved key: %v", err)
			}
			if n, _ := c.LLen(ctx, r.Keys("bad").Queue).Result(); n != 1 {
				t.Fatalf("the failed pop left %d jobs ready, want 1", n)
			}
		})
	}
}
