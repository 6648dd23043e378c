package rdb

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// popAfter is what a worker sends: the deletions, then the pop, in one pipeline.
func popAfter(ctx context.Context, r *RDB, finished []Finished, queue string, reserveUntil int64, max int, t Ticket) (jobs []PoppedJob, deleted []bool, errs []error, delErr, err error) {
	pop, err := r.PipelinedPopTicket(ctx, queue, reserveUntil, max, t)
	if err != nil {
		deleted, errs, delErr = r.DeleteReservedMany(ctx, finished)
		return nil, deleted, errs, delErr, err
	}
	deleted, errs, extra, delErr := r.DeleteReservedManyAnd(ctx, finished, func(p redis.Pipeliner) { pop.Queue(ctx, p) })
	if len(extra) != 1 {
		return nil, deleted, errs, delErr, fmt.Errorf("%d commands after the deletions, want the pop", len(extra))
	}
	jobs, err = pop.Result(ctx)
	return jobs, deleted, errs, delErr, err
}

func TestPipelinedPop(t *testing.T) {
	second := `{"id":"2","attempts":0}`
	secondR := `{"id":"2","attempts":1}`
	other := `{"id":"o","attempts":1}`
	expectDeleted := func(t *testing.T, deleted []bool, errs []error, delErr error, want ...bool) {
		t.Helper()
		if delErr != nil || len(deleted) != len(want) || len(errs) != len(want) {
			t.Fatalf("deletions: %v %v %v, want %v", deleted, errs, delErr, want)
		}
		for i := range want {
			if deleted[i] != want[i] || errs[i] != nil {
				t.Errorf("deletion %d: %v (%v), want %v", i, deleted[i], errs[i], want[i])
			}
		}
	}
	runCases(t, []opCase{{
		name: "the deletions run, then the pop, with the ticket kept",
		seed: state{"queues:%Q": list(second), "queues:%Q:notify": ones(1),
			"queues:%Q:reserved": zset(sampleS8r, until, other, until+1)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			jobs, deleted, errs, delErr, err := popAfter(ctx, e.r, []Finished{
				{e.queue, []byte(sampleS8r)},
				{e.queue, []byte(`{"id":"never","attempts":1}`)},
			}, e.queue, until+7, 5, ticket(1))
			expectPopped(t, jobs, err, second)
			expectDeleted(t, deleted, errs, delErr, true, false)
			// Asked again with the same ticket: the same job, nothing deleted twice.
			jobs, deleted, errs, delErr, err = popAfter(ctx, e.r, []Finished{{e.queue, []byte(sampleS8r)}},
				e.queue, until+9, 5, ticket(1))
			expectPopped(t, jobs, err, second)
			expectDeleted(t, deleted, errs, delErr, false)
		},
		want: state{"queues:%Q:reserved": zset(other, until+1, secondR, until+7), ticketKey: kept(1, second)},
	}, {
		name: "no deletions is PopTicket",
		seed: state{"queues:%Q": list(second), "queues:%Q:notify": ones(1)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			jobs, deleted, errs, delErr, err := popAfter(ctx, e.r, nil, e.queue, until, 5, ticket(3))
			expectPopped(t, jobs, err, second)
			if len(deleted) != 0 || len(errs) != 0 || delErr != nil {
				t.Errorf("deletions %v %v %v", deleted, errs, delErr)
			}
		},
		want: state{"queues:%Q:reserved": zset(secondR, until), ticketKey: kept(3, second)},
	}, {
		name: "an empty queue: the deletions still run",
		seed: state{"queues:%Q:reserved": zset(sampleS8r, until)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			jobs, deleted, errs, delErr, err := popAfter(ctx, e.r, []Finished{{e.queue, []byte(sampleS8r)}},
				e.queue, until, 5, ticket(1))
			expectPopped(t, jobs, err)
			expectDeleted(t, deleted, errs, delErr, true)
		},
		want: state{ticketKey: kept(1)},
	}, {
		name: "a bad ticket pops nothing, the deletions still run",
		seed: state{"queues:%Q": list(second), "queues:%Q:notify": ones(1), "queues:%Q:reserved": zset(sampleS8r, until)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			jobs, deleted, errs, delErr, err := popAfter(ctx, e.r, []Finished{{e.queue, []byte(sampleS8r)}},
				e.queue, until, 5, Ticket{Owner: "w1"})
			if err == nil || !strings.Contains(err.Error(), "sequence number") || jobs != nil {
				t.Fatalf("pop with seq 0: %v %v", jobs, err)
			}
			expectDeleted(t, deleted, errs, delErr, true)
		},
		want: state{"queues:%Q": list(second), "queues:%Q:notify": ones(1)},
	}})
}

// A server that forgot the pop script (restarted, SCRIPT FLUSH) answers the pipelined
// EVALSHA with NOSCRIPT: the deletions have run, and the pop is sent again with its
// source, once.
func TestPipelinedPopNoScript(t *testing.T) {
	e := newEnv(t, variants()[0])
	ctx := context.Background()
	second := `{"id":"2","attempts":0}`
	e.seed(t, state{"queues:%Q": list(second), "queues:%Q:notify": ones(1), "queues:%Q:reserved": zset(sampleS8r, until)})
	mustNoErr(t, e.c.ScriptFlush(ctx).Err())
	jobs, deleted, errs, delErr, err := popAfter(ctx, e.r, []Finished{{e.queue, []byte(sampleS8r)}},
		e.queue, until, 5, ticket(1))
	expectPopped(t, jobs, err, second)
	if delErr != nil || !deleted[0] || errs[0] != nil {
		t.Fatalf("deletion: %v %v %v", deleted, errs, delErr)
	}
	assertState(t, "after NOSCRIPT", e.dump(t), state{"queues:%Q:reserved": zset(`{"id":"2","attempts":1}`, until), ticketKey: kept(1, second)})
}

// A queue whose key holds the wrong type fails the pop before any write; the deletions,
// commands of their own, are made all the same.
func TestPipelinedPopBrokenQueue(t *testing.T) {
	e := newEnv(t, variants()[0])
	ctx := context.Background()
	e.seed(t, state{"queues:%Q:reserved": zset(sampleS8r, until)})
	mustNoErr(t, e.c.Set(ctx, e.r.Keys("bad").Queue, "x", 0).Err())
	t.Cleanup(func() { e.c.Del(context.Background(), e.r.Keys("bad").Queue) })
	jobs, deleted, errs, delErr, err := popAfter(ctx, e.r, []Finished{{e.queue, []byte(sampleS8r)}},
		"bad", until, 5, ticket(1))
	if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") || jobs != nil {
		t.Fatalf("pop from a string: %v %v", jobs, err)
	}
	if delErr != nil || !deleted[0] || errs[0] != nil {
		t.Fatalf("deletion: %v %v %v", deleted, errs, delErr)
	}
	assertState(t, "after the refused pop", e.dump(t), state{})
}

// A pipeline that cannot be sent reports the error for the pop and for every deletion.
func TestPipelinedPopReportsErrors(t *testing.T) {
	e := newEnv(t, variants()[0])
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	jobs, _, errs, delErr, err := popAfter(ctx, e.r, []Finished{{e.queue, []byte("a")}, {e.queue, []byte("b")}},
		e.queue, until, 5, ticket(1))
	if err == nil || jobs != nil || delErr == nil || errs[0] == nil || errs[1] == nil {
		t.Fatalf("cancelled context: jobs %v err %v, deletions %v %v", jobs, err, errs, delErr)
	}
}
