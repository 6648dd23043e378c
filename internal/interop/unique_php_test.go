package interop

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
)

// uniqueJob is App\Jobs\Matrix\UniqueJob: ShouldBeUnique, uniqueId() = orderId,
// uniqueFor 60. UniqueLockOwner is Queueable's 13.24+ property.
type uniqueJob struct {
	OrderID         int64  `php:"orderId"`
	UniqueForSecs   int64  `php:"uniqueFor"`
	UniqueLockOwner string `php:"uniqueLockOwner"`
	laraq.Queueable
}

func (uniqueJob) PHPClass() string           { return `App\Jobs\Matrix\UniqueJob` }
func (j uniqueJob) UniqueID() string         { return strconv.FormatInt(j.OrderID, 10) }
func (j uniqueJob) UniqueFor() time.Duration { return time.Duration(j.UniqueForSecs) * time.Second }

// untilProcessingJob is App\Jobs\Matrix\UniqueUntilProcessingJob.
type untilProcessingJob struct {
	OrderID       int64 `php:"orderId"`
	UniqueForSecs int64 `php:"uniqueFor"`
	laraq.Queueable
}

func (untilProcessingJob) PHPClass() string   { return `App\Jobs\Matrix\UniqueUntilProcessingJob` }
func (j untilProcessingJob) UniqueID() string { return strconv.FormatInt(j.OrderID, 10) }
func (j untilProcessingJob) UniqueFor() time.Duration {
	return time.Duration(j.UniqueForSecs) * time.Second
}
func (untilProcessingJob) ShouldBeUniqueUntilProcessing() {}

// peerConnection is a Connection shaped like the peer's application: its release,
// cache prefix (without the ":" RedisStore appends up to 10.x) and the queue client,
// which is also the skeleton's lock_connection.
func peerConnection(t testing.TB, major int, srv *testenv.Redis, prefix string) *laraq.Connection {
	t.Helper()
	return &laraq.Connection{
		Client: srv.Client(t, 0), Prefix: prefix, Release: testkit.PeerRelease(t, major),
		Cache: laraq.CacheStore{Client: srv.Client(t, 1), Prefix: strings.TrimSuffix(testenv.Peer(t, major).CachePrefix, ":")},
	}
}

// TestUniqueJobsAgainstPHP: on every release, PHP's dispatch() takes a ShouldBeUnique
// job's lock and a Go worker releases it exactly when PHP's would: after the handler
// succeeded or the job failed (the lock held while the handler runs), just before the
// handler for ShouldBeUniqueUntilProcessing; a later PHP dispatch() is queued again. An
// untyped handler finds the lock in the hidden Context (11.x+). A Go dispatch takes the
// same lock (PHP's dispatch() is then refused, as is a second Go dispatch), and PHP's
// worker releases it after running the job.
func TestUniqueJobsAgainstPHP(t *testing.T) {
	t.Parallel()
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		testenv.Since(t, major, testenv.Unique)
		ctx := context.Background()
		client := srv.Client(t, 0)
		prefix := testenv.Prefix(t)
		record := testkit.RecordFile(t)
		php := testenv.PHPEnv{Major: major, Redis: srv, Prefix: prefix, Record: record}
		conn := peerConnection(t, major, srv, prefix)
		q := "uq" + testenv.RandomName(4)
		lockKey := func(class, id string) string {
			return conn.CacheScheme().ConnectionPrefix + conn.Cache.Prefix + sep(major) + conn.Release.UniqueLockKey(class, false, "", id)
		}
		held := func(key string) bool { return client.Exists(ctx, key).Val() == 1 }
		var phpPayload string // the first payload PHP's dispatch() wrote
		dispatch := func(class string, id int) bool {
			d := php.Dispatch(t, nil, `{"class":"App\\Jobs\\Matrix\\`+class+`","props":{"orderId":`+strconv.Itoa(id)+`},"queue":"`+q+`","via":"dispatch"}`)[0]
			if phpPayload == "" {
				phpPayload = d.Payload
			}
			return d.Dispatched != nil && *d.Dispatched
		}
		uniq := lockKey(`App\Jobs\Matrix\UniqueJob`, "42")
		if !dispatch("UniqueJob", 42) || !held(uniq) {
			keys, _ := testenv.Keys(ctx, client, prefix)
			t.Fatalf("PHP's dispatch() took no lock %q; keys %v", uniq, keys)
		}
		if dispatch("UniqueJob", 42) {
			t.Fatalf("a second PHP dispatch() was queued while the lock is held")
		}
		untilKey := lockKey(`App\Jobs\Matrix\UniqueUntilProcessingJob`, "7")
		if !dispatch("UniqueUntilProcessingJob", 7) || !held(untilKey) {
			keys, _ := testenv.Keys(ctx, client, prefix)
			t.Fatalf("no lock %q for the until-processing job; keys %v", untilKey, keys)
		}

		// Success: the lock is held while the handler runs, released after.
		var mu sync.Mutex
		during := map[string]bool{}
		jobs := laraq.NewJobs()
		laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[uniqueJob]) error {
			mu.Lock()
			defer mu.Unlock()
			during[job.Command.UniqueID()] = held(uniq)
			if job.Command.OrderID == 43 {
				return errors.New("boom")
			}
			return nil
		})
		laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[untilProcessingJob]) error {
			mu.Lock()
			defer mu.Unlock()
			during["until"] = held(untilKey)
			return nil
		})
		failures := &testkit.MemStore{}
		conn.Failed = testkit.LogStore{FailedLogger: failures}
		g := testkit.StartGoWorker(t, conn, jobs, laraq.WorkerConfig{Queues: []string{q}})
		testkit.WaitFor(t, 10*time.Second, "the unique jobs to run", func() bool { return g.Count(laraq.EventProcessed) == 2 })
		if held(uniq) || !during["42"] {
			t.Errorf("after success the lock is held: %v; held while running: %v", held(uniq), during)
		}
		// (The running worker may take the job before dispatch.php looks: only the run
		// proves that it was queued.)
		dispatch("UniqueJob", 42)
		testkit.WaitFor(t, 10*time.Second, "a second PHP dispatch() to be queued and run", func() bool { return g.Count(laraq.EventProcessed) == 3 })

		// Failure (tries 1): the lock is released with the failed job.
		fail43 := lockKey(`App\Jobs\Matrix\UniqueJob`, "43")
		dispatch("UniqueJob", 43)
		testkit.WaitFor(t, 10*time.Second, "the job to fail", func() bool { return g.Count(laraq.EventFailed) == 1 })
		if held(fail43) {
			t.Errorf("the lock of a failed job is held")
		}

		// Until processing: released before the handler ran.
		if held(untilKey) || during["until"] {
			t.Errorf("until processing: held while running %v, after %v; want released before", during["until"], held(untilKey))
		}
		g.Stop(t)

		// An untyped handler: the hidden Context names the lock (11.x+); before that
		// nothing tells Go the job is unique, and the lock stays until uniqueFor.
		untyped := laraq.NewJobs()
		untyped.HandleFunc(`App\Jobs\Matrix\UniqueJob`, func(ctx context.Context, job *laraq.JobInfo) error { return nil })
		key44 := lockKey(`App\Jobs\Matrix\UniqueJob`, "44")
		if !dispatch("UniqueJob", 44) {
			t.Fatal("dispatch of order 44 refused")
		}
		gu := testkit.StartGoWorker(t, conn, untyped, laraq.WorkerConfig{Queues: []string{q}})
		testkit.WaitFor(t, 10*time.Second, "the untyped run", func() bool { return gu.Count(laraq.EventProcessed) == 1 })
		gu.Stop(t)
		if want := major < 11; held(key44) != want {
			t.Errorf("untyped handler: lock held %v, want %v", held(key44), want)
		}
		client.Del(ctx, key44)

		// Go dispatches: the same lock, refusing duplicates from PHP and Go; PHP's worker
		// releases it.
		d, err := laraq.NewDispatcher(conn)
		if err != nil {
			t.Fatal(err)
		}
		q2 := q + "-go"
		if _, err := d.Dispatch(ctx, uniqueJob{OrderID: 99, UniqueForSecs: 60}, laraq.OnQueue(q2)); err != nil {
			t.Fatal(err)
		}
		key99 := lockKey(`App\Jobs\Matrix\UniqueJob`, "99")
		if ttl := client.TTL(ctx, key99).Val(); ttl <= 0 || ttl > time.Minute {
			t.Errorf("Go's lock %s has ttl %v, want uniqueFor 60 s", key99, ttl)
		}
		if _, err := d.Dispatch(ctx, uniqueJob{OrderID: 99, UniqueForSecs: 60}, laraq.OnQueue(q2)); !errors.Is(err, laraq.ErrUniqueLocked) {
			t.Errorf("second Go dispatch: %v, want ErrUniqueLocked", err)
		}
		if dispatch("UniqueJob", 99) {
			t.Errorf("PHP's dispatch() was queued while Go's lock is held")
		}
		if n := client.LLen(ctx, prefix+"queues:"+q2).Val(); n != 1 {
			t.Errorf("%d jobs queued, want 1", n)
		}
		// The payload carries the lock as PHP's does: the hidden Context (11.x+) in the
		// same place, and from 13.24 the owner, which is the lock's value.
		goPayload := client.LIndex(ctx, prefix+"queues:"+q2, 0).Val()
		goEnv, err := payload.Parse([]byte(goPayload))
		if err != nil {
			t.Fatal(err)
		}
		phpEnv, _ := payload.Parse([]byte(phpPayload))
		if a, b := topKeys(goEnv), topKeys(phpEnv); a != b {
			t.Errorf("Go's payload keys %s, PHP's %s", a, b)
		}
		gotCtx, _ := goEnv.Get("illuminate:log:context")
		wantCtx, _ := phpEnv.Get("illuminate:log:context")
		owner := client.Get(ctx, key99).Val()
		wantCtx = []byte(strings.ReplaceAll(strings.ReplaceAll(string(wantCtx), `UniqueJob:42`, `UniqueJob:99`), phpOwner(t, phpEnv), owner))
		if string(gotCtx) != string(wantCtx) {
			t.Errorf("Go's hidden Context %s, want %s", gotCtx, wantCtx)
		}
		if major == 13 && !strings.Contains(goEnv.Command, `s:15:"uniqueLockOwner";s:16:"`+owner+`"`) {
			t.Errorf("13.x: the command's uniqueLockOwner is not the lock's owner %q: %s", owner, goEnv.Command)
		}
		php.Run(t, nil, "work.php", "--stop-when-empty", "--sleep=0", "--queue="+q2)
		if held(key99) {
			t.Errorf("PHP's worker did not release the lock Go took (owner %q)", client.Get(ctx, key99).Val())
		}
		if recs := testenv.ReadRecords(t, record); len(recs) != 1 || recs[0].Class != `App\Jobs\Matrix\UniqueJob` {
			t.Errorf("PHP ran %d jobs, want the Go dispatch", len(recs))
		}
	})
}

// topKeys lists a payload's top-level keys in order.
func topKeys(env *payload.Envelope) string {
	var keys []string
	for _, f := range env.Fields {
		keys = append(keys, f.Key)
	}
	return strings.Join(keys, ",")
}

// phpOwner is the lock owner in a 13.24+ payload's hidden Context ("" before).
func phpOwner(t testing.TB, env *payload.Envelope) string {
	raw, ok := env.Get("illuminate:log:context")
	if !ok {
		return "\x00none"
	}
	i := strings.Index(string(raw), `"laravel_unique_job_lock_owner":"s:16:\"`)
	if i < 0 {
		return "\x00none"
	}
	start := i + len(`"laravel_unique_job_lock_owner":"s:16:\"`)
	return string(raw[start : start+16])
}

// sep is RedisStore's ":" after the cache prefix up to Laravel 10.
func sep(major int) string {
	if major <= 10 {
		return ":"
	}
	return ""
}
