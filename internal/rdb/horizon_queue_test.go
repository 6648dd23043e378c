package rdb

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The queue operations that carry more commands (Horizon's records): the queue keys end
// exactly as with the plain operations, the extra commands run after them, and an extra
// command that fails changes nothing of the queue operation's result.
func TestQueueOperationsWithMoreCommands(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, variants()[0])
	extraKey := e.prefix + "queues:" + e.seg + ":extra"
	t.Cleanup(func() { e.c.Del(ctx, extraKey) })
	// A string under extraKey makes an LPUSH of the extra commands fail (WRONGTYPE).
	if err := e.c.Set(ctx, extraKey, "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	failing := func(p redis.Pipeliner) { p.LPush(ctx, extraKey, "record") }

	// PushAllAnd: a ready and a delayed job in one MULTI, the failing extra command after.
	extra, err := e.r.PushAllAnd(ctx, []Pushing{
		{Queue: e.queue, Payload: []byte(`{"id":"a","attempts":0}`)},
		{Queue: e.queue, Payload: []byte(`{"id":"b","attempts":0}`), Delayed: true, AvailableAt: 1700000100},
	}, failing)
	if err != nil || len(extra) != 1 || extra[0].Err() == nil {
		t.Fatalf("PushAllAnd: %v, extra %v", err, extra)
	}
	assertState(t, "PushAllAnd", e.dump(t), state{
		"queues:%Q":         list(`{"id":"a","attempts":0}`),
		"queues:%Q:notify":  list("1"),
		"queues:%Q:delayed": zset(`{"id":"b","attempts":0}`, 1700000100),
		"queues:%Q:extra":   str("x"),
	})

	// PushOnceAnd: pushed once, its extra commands run each time.
	for i, want := range []bool{true, false} {
		pushed, extra, err := e.r.PushOnceAnd(ctx, e.queue, []byte(`{"id":"c","attempts":0}`), "c", time.Minute, failing)
		if err != nil || pushed != want || len(extra) != 1 || extra[0].Err() == nil {
			t.Fatalf("PushOnceAnd %d: pushed %v, %v, extra %v", i, pushed, err, extra)
		}
	}
	if n, _ := e.c.LLen(ctx, e.r.Keys(e.queue).Queue).Result(); n != 2 {
		t.Fatalf("ready jobs %d, want 2", n)
	}

	// DeleteReservedManyAnd: each deletion's own result, whatever the extra commands did.
	jobs, err := e.r.PopMany(ctx, e.queue, 1700000200, 2)
	if err != nil || len(jobs) != 2 {
		t.Fatalf("PopMany: %v, %d", err, len(jobs))
	}
	fin := []Finished{{Queue: e.queue, Reserved: jobs[0].Reserved}, {Queue: e.queue, Reserved: []byte("not reserved")},
		{Queue: e.queue, Reserved: jobs[1].Reserved}}
	deleted, errs, extra, err := e.r.DeleteReservedManyAnd(ctx, fin, failing)
	if err != nil || errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Fatalf("DeleteReservedManyAnd: %v %v", err, errs)
	}
	if !deleted[0] || deleted[1] || !deleted[2] || len(extra) != 1 || extra[0].Err() == nil {
		t.Fatalf("deleted %v, extra %v", deleted, extra)
	}
	if n, _ := e.c.ZCard(ctx, e.r.Keys(e.queue).Reserved).Result(); n != 0 {
		t.Errorf("%d jobs still reserved", n)
	}
	// Without extra commands it is DeleteReservedMany.
	deleted, _, extra, err = e.r.DeleteReservedManyAnd(ctx, fin[:1], nil)
	if err != nil || deleted[0] || extra != nil {
		t.Errorf("again: deleted %v, %v, extra %v", deleted, err, extra)
	}

	// A server that does not answer: every result is an error, nothing is claimed.
	dead, err := New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1}), Options{Prefix: e.prefix})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dead.PushAllAnd(ctx, []Pushing{{Queue: e.queue, Payload: []byte(`{}`)}}, failing); err == nil {
		t.Error("PushAllAnd on a dead server: no error")
	}
	if deleted, errs, _, err := dead.DeleteReservedManyAnd(ctx, fin[:1], failing); err == nil || errs[0] == nil || deleted[0] {
		t.Errorf("DeleteReservedManyAnd on a dead server: %v %v %v", deleted, errs, err)
	}
}
