package faults

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// brokenQueue is a queue "high" one of whose keys someone overwrote with a string, next
// to a healthy queue "default", each with three jobs.
type brokenQueue struct {
	conn   *laraq.Connection
	prefix string
	high   string // the key of the ready list of queue high
	broken string // the key that holds a string
	saved  string // where the ready list's jobs wait while it is broken
	before map[string]keyState
}

// breakQueue dispatches jobs 1-3 to high and 11-13 to default and overwrites high's key
// with suffix ("" for the ready list) with a string. The ready list's jobs are renamed
// aside first, as an operator would have to, so that no job is lost by the test itself.
func breakQueue(t *testing.T, suffix string) *brokenQueue {
	t.Helper()
	ctx := context.Background()
	c := testenv.RedisServer(t).Client(t, 0)
	b := &brokenQueue{prefix: testenv.Prefix(t)}
	b.conn = &laraq.Connection{Client: c, Prefix: b.prefix, Release: release}
	b.high = b.prefix + "queues:high"
	b.broken, b.saved = b.high+suffix, b.prefix+"saved:high"
	dispatch(t, b.conn, "high", 1, 2, 3)
	dispatch(t, b.conn, "default", 11, 12, 13)
	if suffix == "" {
		if err := c.Rename(ctx, b.high, b.saved).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Set(ctx, b.broken, "overwritten by hand", 0).Err(); err != nil {
		t.Fatal(err)
	}
	b.before = b.state(t)
	return b
}

// state is high's four keys and the saved ready list.
func (b *brokenQueue) state(t *testing.T) map[string]keyState {
	t.Helper()
	s := queueState(t, b.conn.Client, b.high)
	saved, err := b.conn.Client.LRange(context.Background(), b.saved, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	s["saved"] = keyState{Type: "list", Members: saved}
	return s
}

// repair deletes the string and puts the saved jobs back.
func (b *brokenQueue) repair(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if err := b.conn.Client.Del(ctx, b.broken).Err(); err != nil {
		t.Fatal(err)
	}
	if b.broken == b.high {
		if err := b.conn.Client.Rename(ctx, b.saved, b.high).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// A key of queue high holding a string — its ready list, :delayed, :reserved or
// :notify — skips high with one ERROR line naming the key and its type; default, after
// it in priority, is worked meanwhile (before, one broken queue stalled every queue
// behind it). /healthz stays 200 and names high, laraq_queue_skipped{queue="high"} is 1,
// and high's jobs stay exactly where and as they were: none popped, reserved or counted.
// Once the key is repaired high resumes by itself and each of its jobs runs once.
func TestWrongTypeKeySkipsItsQueueOnly(t *testing.T) {
	t.Parallel()
	for _, suffix := range []string{"", ":delayed", ":reserved", ":notify"} {
		t.Run("queues:high"+suffix, func(t *testing.T) {
			t.Parallel()
			b := breakQueue(t, suffix)
			var r runs
			w := startWork(t, nil, handlers(&r), "--redis", "redis://"+testenv.RedisServer(t).Addr+"/0", "--prefix", b.prefix,
				"--laravel-version", release.String(), "--no-cache", "--queue", "high,default", "--sleep", "0.1", "--skipped-queue-retry", "1")
			eventually(t, 20*time.Second, "the jobs of default to run", func() bool { return r.once(11, 12, 13) })
			// Several retries of high pass.
			time.Sleep(2500 * time.Millisecond)
			if got := r.of(1, 2, 3); !reflect.DeepEqual(got, []int{0, 0, 0}) {
				t.Fatalf("high's jobs ran %v times while its key %s was broken", got, b.broken)
			}
			skipped := w.logLines("queue skipped")
			if len(skipped) != 1 || skipped[0]["level"] != "ERROR" || skipped[0]["queue"] != "high" ||
				skipped[0]["key"] != b.broken || skipped[0]["type"] != "string" {
				t.Fatalf("want one ERROR line naming queue high, key %s and its type, got %v\n%s", b.broken, skipped, w.log())
			}
			if after := b.state(t); !reflect.DeepEqual(after, b.before) {
				t.Fatalf("high's keys changed while it was skipped:\nbefore %v\nafter  %v", b.before, after)
			}
			code, h := w.health(t)
			if code != 200 || !h.Healthy || !strings.Contains(h.Skipped["high"], b.broken) || len(h.Skipped) != 1 {
				t.Fatalf("/healthz %d %+v, want 200 naming high and %s", code, h, b.broken)
			}
			if v := w.metric(t, `laraq_queue_skipped{queue="high"}`); v != "1" {
				t.Fatalf(`laraq_queue_skipped{queue="high"} = %q, want 1`, v)
			}

			b.repair(t)
			eventually(t, 20*time.Second, "high's jobs to run after the repair", func() bool { return r.once(1, 2, 3) })
			if len(w.logLines("queue resumed")) != 1 {
				t.Errorf("no single resume line:\n%s", w.log())
			}
			if v := w.metric(t, `laraq_queue_skipped{queue="high"}`); v != "0" {
				t.Errorf(`laraq_queue_skipped{queue="high"} = %q after the repair, want 0`, v)
			}
			if code, h := w.health(t); code != 200 || len(h.Skipped) != 0 {
				t.Errorf("/healthz %d %+v after the repair", code, h)
			}
			if rc := w.stop(t); rc != 0 {
				t.Fatalf("exit %d:\n%s", rc, w.log())
			}
			if r.total() != 6 {
				t.Errorf("%d runs of 6 jobs", r.total())
			}
			for _, q := range []string{"high", "default"} {
				for k, s := range queueState(t, b.conn.Client, b.prefix+"queues:"+q) {
					if !strings.HasSuffix(k, ":notify") && len(s.Members) != 0 {
						t.Errorf("%s holds %v after every job ran", k, s.Members)
					}
				}
			}
		})
	}
}

// A worker whose every queue is skipped cannot take a job: /healthz answers 503 and
// says why, although Redis answers.
func TestEveryQueueSkippedIsUnhealthy(t *testing.T) {
	t.Parallel()
	b := breakQueue(t, ":notify")
	var r runs
	w := startWork(t, nil, handlers(&r), "--redis", "redis://"+testenv.RedisServer(t).Addr+"/0", "--prefix", b.prefix,
		"--laravel-version", release.String(), "--no-cache", "--queue", "high", "--sleep", "0.1", "--skipped-queue-retry", "1")
	eventually(t, 20*time.Second, "/healthz 503", func() bool { code, _ := w.health(t); return code == 503 })
	for range 10 { // past the heartbeat's PINGs, which Redis answers
		code, h := w.health(t)
		if code != 503 || h.Healthy || !strings.Contains(h.Reason, "every queue is skipped") || !strings.Contains(h.Skipped["high"], b.broken) {
			t.Fatalf("/healthz %d %+v while every queue is skipped", code, h)
		}
		time.Sleep(300 * time.Millisecond)
	}
	b.repair(t)
	eventually(t, 20*time.Second, "/healthz 200 after the repair", func() bool { code, _ := w.health(t); return code == 200 })
	eventually(t, 20*time.Second, "high's jobs to run", func() bool { return r.once(1, 2, 3) })
}

// --stop-when-empty cannot say the queues are empty while one is skipped: the worker
// works the others, then exits 3 with one line naming the key, instead of 0 (or of
// waiting forever, as before). --once with its only queue skipped does the same.
func TestStopWhenEmptyWithASkippedQueue(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		ran    []int
		suffix string
	}{
		{"stop-when-empty", []string{"--queue", "high,default", "--stop-when-empty"}, []int{11, 12, 13}, ":reserved"},
		{"once", []string{"--queue", "high", "--once"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := breakQueue(t, tc.suffix)
			var r runs
			w := startWork(t, nil, handlers(&r), append([]string{"--redis", "redis://" + testenv.RedisServer(t).Addr + "/0", "--prefix", b.prefix,
				"--laravel-version", release.String(), "--no-cache", "--sleep", "0.1"}, tc.args...)...)
			if rc := w.exit(t, 20*time.Second); rc != laraq.ExitRedisSetup {
				t.Fatalf("exit %d, want %d:\n%s", rc, laraq.ExitRedisSetup, w.log())
			}
			oneLine(t, w, "queues could not be worked", "key "+b.broken+` of queue "high" holds a string, not a`, "fix: ")
			if !r.once(tc.ran...) || r.total() != len(tc.ran) {
				t.Errorf("runs %v, want each of %v once", r.n, tc.ran)
			}
			if after := b.state(t); !reflect.DeepEqual(after, b.before) {
				t.Errorf("high's keys changed:\nbefore %v\nafter  %v", b.before, after)
			}
		})
	}
}
