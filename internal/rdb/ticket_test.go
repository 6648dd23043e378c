package rdb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/testenv"
)

// ticketKey is the ticket key of owner "w1" in state form.
const ticketKey = "queues:%Q:laraq-pop:w1"

func ticket(seq int64) Ticket { return Ticket{Owner: "w1", Seq: seq, Keep: 90 * time.Second} }

// kept is the ticket key after pop seq took jobs: the sequence number, then the jobs as
// they were in the ready list.
func kept(seq int64, jobs ...string) keyState {
	ks := list(append([]string{fmt.Sprint(seq)}, jobs...)...)
	ks.TTL = 90
	return ks
}

func expectPopped(t *testing.T, got []PoppedJob, err error, want ...string) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var g []string
	for _, p := range got {
		g = append(g, string(p.Job))
	}
	if strings.Join(g, "\n") != strings.Join(want, "\n") {
		t.Fatalf("popped %q, want %q", g, want)
	}
}

func TestPopTicket(t *testing.T) {
	second := `{"id":"2","attempts":0}`
	runCases(t, []opCase{{
		name: "the same ticket gets the same jobs and pops nothing more",
		seed: state{"queues:%Q": list(sampleS8, second), "queues:%Q:notify": ones(2)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			got, err := e.r.PopTicket(ctx, e.queue, until, 1, ticket(1))
			expectPopped(t, got, err, sampleS8)
			again, err := e.r.PopTicket(ctx, e.queue, until+5, 1, ticket(1))
			expectPopped(t, again, err, sampleS8)
			if string(again[0].Reserved) != sampleS8r {
				t.Fatalf("asked again, reserved %s", again[0].Reserved)
			}
		},
		want: state{"queues:%Q": list(second), "queues:%Q:notify": ones(1),
			"queues:%Q:reserved": zset(sampleS8r, until), ticketKey: kept(1, sampleS8)},
	}, {
		name: "the next sequence number pops the next jobs",
		seed: state{"queues:%Q": list(sampleS8, second), "queues:%Q:notify": ones(2)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			got, err := e.r.PopTicket(ctx, e.queue, until, 1, ticket(1))
			expectPopped(t, got, err, sampleS8)
			got, err = e.r.PopTicket(ctx, e.queue, until, 5, ticket(2))
			expectPopped(t, got, err, second)
		},
		want: state{"queues:%Q:reserved": zset(sampleS8r, until, `{"id":"2","attempts":1}`, until),
			ticketKey: kept(2, second)},
	}, {
		name: "a stale copy of an earlier request pops nothing",
		seed: state{"queues:%Q": list(sampleS8), "queues:%Q:notify": ones(1), ticketKey: kept(7)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			got, err := e.r.PopTicket(ctx, e.queue, until, 1, ticket(6))
			expectPopped(t, got, err)
		},
		want: state{"queues:%Q": list(sampleS8), "queues:%Q:notify": ones(1), ticketKey: kept(7)},
	}, {
		name: "an empty reply is kept too, so a late copy cannot pop",
		seed: state{},
		run: func(t *testing.T, ctx context.Context, e *env) {
			got, err := e.r.PopTicket(ctx, e.queue, until, 1, ticket(1))
			expectPopped(t, got, err)
			e.seed(t, state{"queues:%Q": list(sampleS8), "queues:%Q:notify": ones(1)})
			got, err = e.r.PopTicket(ctx, e.queue, until, 1, ticket(1))
			expectPopped(t, got, err)
		},
		want: state{"queues:%Q": list(sampleS8), "queues:%Q:notify": ones(1), ticketKey: kept(1)},
	}, {
		name: "invalid payloads are replayed with their reason",
		seed: state{"queues:%Q": list("not json", sampleS8), "queues:%Q:notify": ones(2)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			first, err := e.r.PopTicket(ctx, e.queue, until, 2, ticket(3))
			expectPopped(t, first, err, "not json", sampleS8)
			again, err := e.r.PopTicket(ctx, e.queue, until, 2, ticket(3))
			expectPopped(t, again, err, "not json", sampleS8)
			if again[0].Invalid == nil || again[0].Invalid.Reason != first[0].Invalid.Reason || again[0].Invalid.Reason == "" {
				t.Fatalf("replayed invalid %+v, first %+v", again[0].Invalid, first[0].Invalid)
			}
			if again[1].Invalid != nil || string(again[1].Reserved) != sampleS8r {
				t.Fatalf("replayed valid job %+v", again[1])
			}
		},
		want: state{"queues:%Q:invalid": list("not json"), "queues:%Q:reserved": zset(sampleS8r, until),
			ticketKey: kept(3, "not json", sampleS8)},
	}, {
		name: "asked again, a job whose reservation expired and was migrated back is not replied",
		seed: state{"queues:%Q": list(sampleS8, sampleS12), "queues:%Q:notify": ones(2)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			got, err := e.r.PopTicket(ctx, e.queue, until, 2, ticket(4))
			expectPopped(t, got, err, sampleS8, sampleS12)
			// The first job's reservation is held longer; the second's expires and a
			// migration moves it back: it belongs to whoever pops it next, not to the
			// lost pop.
			held, err := e.r.ExtendReservation(ctx, e.queue, got[0].Reserved, until+60)
			expectBool(t, "held", held, err, true)
			moved, err := e.r.MigrateReserved(ctx, e.queue, until, NoLimit)
			if err != nil || moved != 1 {
				t.Fatalf("migrated %d (%v)", moved, err)
			}
			again, err := e.r.PopTicket(ctx, e.queue, until+90, 2, ticket(4))
			expectPopped(t, again, err, sampleS8)
			if string(again[0].Reserved) != sampleS8r || again[0].Invalid != nil {
				t.Fatalf("replayed %+v", again[0])
			}
		},
		want: state{"queues:%Q": list(sampleS12r), "queues:%Q:notify": ones(1),
			"queues:%Q:reserved": zset(sampleS8r, until+60), ticketKey: kept(4, sampleS8, sampleS12)},
	}, {
		name: "the reservation gone, the same ticket replies nothing and pops nothing",
		seed: state{"queues:%Q": list(sampleS8, sampleS12), "queues:%Q:notify": ones(2)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			got, err := e.r.PopTicket(ctx, e.queue, until, 1, ticket(1))
			expectPopped(t, got, err, sampleS8)
			deleted, err := e.r.DeleteReserved(ctx, e.queue, got[0].Reserved)
			expectBool(t, "deleted", deleted, err, true)
			again, err := e.r.PopTicket(ctx, e.queue, until, 1, ticket(1))
			expectPopped(t, again, err)
		},
		want: state{"queues:%Q": list(sampleS12), "queues:%Q:notify": ones(1), ticketKey: kept(1, sampleS8)},
	}})
}

// stallable starts a redis-server the test may stall and returns it, a client for
// checking, and an RDB on a client with short timeouts and go-redis' own retries, as in
// production, whose pool holds idle connections so that go-redis re-sends a timed-out
// call at once.
func stallable(t *testing.T, prefix string) (*testenv.Redis, *redis.Client, *RDB) {
	t.Helper()
	ctx := context.Background()
	srv := testenv.PrivateRedis(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 200 * time.Millisecond, MaxRetries: 3,
		MinRetryBackoff: 10 * time.Millisecond, MaxRetryBackoff: 20 * time.Millisecond})
	t.Cleanup(func() { c.Close() })
	r, err := New(c, Options{Prefix: prefix})
	mustNoErr(t, err)
	mustNoErr(t, r.LoadScripts(ctx))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { c.Do(ctx, "blpop", prefix+"nothing", "0.05") })
	}
	wg.Wait()
	return srv, srv.Client(t, 0), r
}

// TestPopTicketRecoversALostReply reproduces a Redis stall while a pop is in flight:
// the client times out, re-sends the pop on a new connection, and both copies run when
// Redis resumes. PopMany leaves jobs reserved that no reply handed to anyone; PopTicket,
// asked again with the same ticket, gets exactly the jobs that were reserved.
func TestPopTicketRecoversALostReply(t *testing.T) {
	for _, ticketed := range []bool{false, true} {
		t.Run(fmt.Sprintf("ticket=%v", ticketed), func(t *testing.T) {
			ctx := context.Background()
			prefix := testenv.Prefix(t)
			srv, admin, r := stallable(t, prefix)
			for i := range 10 {
				mustNoErr(t, r.Push(ctx, "default", []byte(fmt.Sprintf(`{"id":"%d","attempts":0}`, i))))
			}
			srv.Stall(t, 1500*time.Millisecond)
			pop := func() ([]PoppedJob, error) {
				if ticketed {
					return r.PopTicket(ctx, "default", until, 2, Ticket{Owner: "w", Seq: 1, Keep: time.Minute})
				}
				return r.PopMany(ctx, "default", until, 2)
			}
			_, err := pop()
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("pop during the stall: %v, want a timeout", err)
			}
			time.Sleep(1200 * time.Millisecond) // the stall has ended and the waiting copies ran
			reserved, err := admin.ZCard(ctx, prefix+"queues:default:reserved").Result()
			mustNoErr(t, err)
			got, err := pop()
			mustNoErr(t, err)
			if ticketed {
				if reserved != 2 || len(got) != 2 {
					t.Fatalf("after the stall %d jobs are reserved and asking again returned %d; want the same 2", reserved, len(got))
				}
				for _, p := range got {
					if err := admin.ZScore(ctx, prefix+"queues:default:reserved", string(p.Reserved)).Err(); err != nil {
						t.Fatalf("returned job %s is not the reserved one: %v", p.Job, err)
					}
				}
				return
			}
			t.Logf("without a ticket the lost pop left %d jobs reserved", reserved)
			// Without a ticket every copy popped, and no reply handed those jobs to anyone.
			if reserved < 2 {
				t.Fatalf("the stall did not leave orphans without a ticket (%d reserved): the reproduction is broken", reserved)
			}
		})
	}
}

func TestPushOnce(t *testing.T) {
	runCases(t, []opCase{{
		name: "a second push with the same id pushes nothing",
		seed: state{},
		run: func(t *testing.T, ctx context.Context, e *env) {
			pushed, err := e.r.PushOnce(ctx, e.queue, []byte(sampleS8), "id1", 90*time.Second)
			expectBool(t, "first push", pushed, err, true)
			pushed, err = e.r.PushOnce(ctx, e.queue, []byte(sampleS8), "id1", 90*time.Second)
			expectBool(t, "second push", pushed, err, false)
			pushed, err = e.r.PushOnce(ctx, e.queue, []byte(sampleS12), "id2", 90*time.Second)
			expectBool(t, "another job", pushed, err, true)
		},
		want: state{"queues:%Q": list(sampleS8, sampleS12), "queues:%Q:notify": ones(2),
			"queues:%Q:laraq-push:id1": func() keyState { k := str("1"); k.TTL = 90; return k }(),
			"queues:%Q:laraq-push:id2": func() keyState { k := str("1"); k.TTL = 90; return k }()},
	}})
}

// A push whose reply a stall lost, repeated as a worker repeats a chain's push, makes the
// job ready once however many copies ran.
func TestPushOnceThroughAStall(t *testing.T) {
	ctx := context.Background()
	srv, admin, r := stallable(t, "p:")
	srv.Stall(t, 1500*time.Millisecond)
	if _, err := r.PushOnce(ctx, "default", []byte(sampleS8), "job1", time.Minute); err == nil {
		t.Fatal("push during the stall answered")
	}
	time.Sleep(1200 * time.Millisecond)
	pushed, err := r.PushOnce(ctx, "default", []byte(sampleS8), "job1", time.Minute)
	mustNoErr(t, err)
	if n, _ := admin.LLen(ctx, "p:queues:default").Result(); n != 1 || pushed {
		t.Fatalf("%d copies ready after the stall (repeat pushed: %v), want 1", n, pushed)
	}
}
