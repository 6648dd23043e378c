package rdb

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// TestPopRefusedForMemoryReservesNothing: at maxmemory under noeviction the pop script
// is refused before its first write, IsOutOfMemory says so, and the job is where it was.
func TestPopRefusedForMemoryReservesNothing(t *testing.T) {
	srv := testenv.PrivateRedis(t, "--maxmemory", "4mb", "--maxmemory-policy", "noeviction")
	c := srv.Client(t, 0)
	ctx := context.Background()
	r, err := New(c, Options{Prefix: "oom_"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.PushBulk(ctx, "default", [][]byte{[]byte(`{"uuid":"u1","job":"X@y","data":[],"attempts":0,"id":"i1"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := c.Eval(ctx, "for i = 1, 60 do redis.call('SET', 'big:'..i, string.rep('x', 100000)) end return 1", nil).Err(); err != nil {
		t.Fatal(err)
	}
	_, err = r.PopTicket(ctx, "default", 2000000000, 1, Ticket{Owner: "o", Seq: 1, Keep: 60e9})
	if !IsOutOfMemory(err) {
		t.Fatalf("pop at maxmemory: %v, want an out-of-memory refusal", err)
	}
	if n, _ := c.LLen(ctx, "oom_queues:default").Result(); n != 1 {
		t.Errorf("%d jobs ready, want 1", n)
	}
	if n, _ := c.ZCard(ctx, "oom_queues:default:reserved").Result(); n != 0 {
		t.Errorf("%d jobs reserved, want 0", n)
	}
	if IsOutOfMemory(errors.New("OOM command not allowed")) || IsOutOfMemory(fmt.Errorf("wrapped: %w", context.Canceled)) {
		t.Error("a plain error taken for a refusal")
	}
}
