package matrix

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// Go twins of jobs_matrix.php's debounced jobs (13.6+).
type dbJob struct {
	DebounceID any    `php:"debounceId"`
	Tag        string `php:"tag"`
	laraq.Queueable
}

func (dbJob) PHPClass() string { return `App\Jobs\Matrix\DebouncedJob` }

type dbNamedJob struct {
	OrderID int64  `php:"orderId"`
	Tag     string `php:"tag"`
	laraq.Queueable
}

func (dbNamedJob) PHPClass() string { return `App\Jobs\Matrix\NamedDebouncedJob` }

// DebounceID mirrors the PHP class's debounceId() method.
func (j dbNamedJob) DebounceID() string { return "order-" + strconv.FormatInt(j.OrderID, 10) }

// copyKeys copies every key under one prefix to another prefix (DUMP/RESTORE).
func copyKeys(t *testing.T, ctx context.Context, from *redis.Client, fromPrefix string, to *redis.Client, toPrefix string) {
	t.Helper()
	keys, err := testenv.Keys(ctx, from, fromPrefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		dump, err := from.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		ttl, err := from.PTTL(ctx, k).Result()
		if err != nil || ttl < 0 {
			ttl = 0
		}
		if err := to.RestoreReplace(ctx, toPrefix+k[len(fromPrefix):], ttl, dump).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDebounceWithLaravel13: Laravel 13.26.1 dispatches debounced jobs (#[DebounceFor]) twice
// per group; its Worker and a laraq worker, from the same Redis state and cache, run the
// same jobs: the last dispatch of each group, both of a group whose token was evicted,
// and the class with debounceId() and displayName() methods under the xxh128 key.
func TestDebounceWithLaravel13(t *testing.T) {
	const major = 13
	testenv.NeedPeer(t, major)
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	peer := testenv.Peer(t, major)
	rel := testkit.PeerInfoRelease(t, peer)
	phpSide, goSide := testkit.NewSide(t, ctx, srv, "php", major), testkit.NewSide(t, ctx, srv, "go", major)
	records := testkit.RecordFile(t)
	penv := testenv.PHPEnv{Major: major, Redis: srv, Prefix: phpSide.Prefix, FailedDB: phpSide.DSN, Record: records}

	job := func(class, props string) string {
		return `{"class":"App\\Jobs\\Matrix\\` + class + `","props":` + props + `,"via":"dispatch"}`
	}
	penv.Dispatch(t, []string{fmt.Sprint("--now=", testkit.ParityT0)},
		job("DebouncedJob", `{"debounceId":"order-7","tag":"a1"}`),
		job("DebouncedJob", `{"debounceId":"order-7","tag":"a2"}`),
		job("DebouncedJob", `{"debounceId":"order-8","tag":"b1"}`),
		job("NamedDebouncedJob", `{"orderId":5,"tag":"n1"}`),
		job("NamedDebouncedJob", `{"orderId":5,"tag":"n2"}`),
		job("DebouncedJob", `{"debounceId":"evicted","tag":"e1"}`),
		job("DebouncedJob", `{"debounceId":"evicted","tag":"e2"}`),
	)
	cacheBase := phpSide.Prefix + peer.CachePrefix + "laravel_debounced_job:"
	named := cacheBase + php.XXH128("Debounced order 5") + ":order-5"
	evicted := cacheBase + `App\Jobs\Matrix\DebouncedJob:evicted`
	for _, k := range []string{named, evicted, cacheBase + `App\Jobs\Matrix\DebouncedJob:order-7`} {
		if n := phpSide.Cache.Exists(ctx, k).Val(); n != 1 {
			keys, _ := testenv.Keys(ctx, phpSide.Cache, phpSide.Prefix)
			t.Fatalf("Laravel %s wrote no %s; cache keys: %q", peer.Tag, k, keys)
		}
	}
	phpSide.Cache.Del(ctx, evicted) // the token is gone: both jobs of the group run
	copyKeys(t, ctx, phpSide.Queue, phpSide.Prefix, goSide.Queue, goSide.Prefix)
	copyKeys(t, ctx, phpSide.Cache, phpSide.Prefix, goSide.Cache, goSide.Prefix)

	later := testkit.ParityT0 + 10 // past the 5 s delay
	testkit.RunWorker(t, penv, time.Minute, "--stop-when-empty", "--sleep=0", fmt.Sprint("--now=", later))
	var phpRan []string
	for _, r := range testenv.ReadRecords(t, records) {
		if r.Event == "handle" {
			phpRan = append(phpRan, propTag(t, []byte(r.Raw)))
		}
	}

	var mu sync.Mutex
	var goRan []string
	note := func(tag string) error {
		mu.Lock()
		defer mu.Unlock()
		goRan = append(goRan, tag)
		return nil
	}
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[dbJob]) error { return note(j.Command.Tag) })
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[dbNamedJob]) error { return note(j.Command.Tag) })
	w, err := testkit.NewWorker(goSide.Queue, testkit.Setup{Prefix: goSide.Prefix, Registry: jobs, Failed: goSide.Store, Release: rel,
		StopWhenEmpty: true, Sleep: -1, Cache: testkit.PeerCache(goSide.Cache, peer), Logger: testkit.QuietLogger(t),
		Now: func() time.Time { return time.Unix(int64(later), 0) }})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatal(err)
	}
	slices.Sort(phpRan)
	slices.Sort(goRan)
	want := []string{"a2", "b1", "e1", "e2", "n2"}
	if !slices.Equal(phpRan, want) || !slices.Equal(goRan, want) {
		t.Fatalf("Laravel %s ran %q, laraq ran %q; want %q", peer.Tag, phpRan, goRan, want)
	}
	if diff, same := testkit.SideBySide(phpSide.EndState(t, ctx), goSide.EndState(t, ctx)); !same {
		t.Fatalf("end states differ:\n%s", diff)
	}
}

// propTag reads the tag property of a raw payload's command.
func propTag(t *testing.T, raw []byte) string {
	t.Helper()
	env, err := payload.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	v, err := phpser.DecodeString(env.Command)
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := v.Prop("tag")
	return tag.Str()
}

// Before 13.6 nothing checks debounceOwner: a job whose token is not the cached one runs.
// From 13.6 it is deleted unrun, and a cached value that is no string never matches.
func TestDebounceByRelease(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	for _, c := range []struct {
		release string
		cached  string // the raw cache value; "" none
		runs    bool
	}{
		{"13.5", `s:40:"` + fortyChars("b") + `";`, true},
		{"13.6", `s:40:"` + fortyChars("b") + `";`, false},
		{"13.6", `s:40:"` + fortyChars("a") + `";`, true},
		{"13.6", "", true},             // evicted: fail-open
		{"13.6", "N;", true},           // null is no owner either
		{"13.6", "b:1;", false},        // true !== the owner
		{"13.6", "12345", false},       // a numeric string, not the owner
		{"13.26.1", "s:3:\"ab", false}, // unserialize() fails: false !== the owner
	} {
		t.Run(c.release+" "+c.cached, func(t *testing.T) {
			prefix := testenv.Prefix(t)
			client, cache := srv.Client(t, 0), srv.Client(t, 1)
			cmd := dbJob{DebounceID: "g", Tag: "x"}
			p := testkit.Job(t, cmd, nil)
			// debounceOwner as DebounceLock sets it, after the class's own properties.
			env, _ := payload.Parse(p)
			v, _ := phpser.DecodeString(env.Command)
			v.AppendProp(phpser.Public, "debounceOwner", phpser.String(fortyChars("a")))
			enc, err := phpser.Encode(v)
			if err != nil {
				t.Fatal(err)
			}
			p = testkit.Job(t, cmd, func(j *payload.ObjectJob) { j.Command = string(enc) })
			store := laraq.CacheStore{Client: cache, Prefix: "laravel-cache-"}
			if c.cached != "" {
				key := prefix + "laravel-cache-laravel_debounced_job:" + cmd.PHPClass() + ":g"
				cache.Set(ctx, key, c.cached, time.Minute)
			}
			client.RPush(ctx, prefix+"queues:default", p)
			ran := false
			jobs := laraq.NewJobs()
			laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[dbJob]) error { ran = true; return nil })
			w, err := testkit.NewWorker(client, testkit.Setup{Prefix: prefix, Registry: jobs, Release: testkit.MustRelease(t, c.release), Cache: store,
				StopWhenEmpty: true, Sleep: -1, Logger: testkit.QuietLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
				t.Fatal(err)
			}
			if ran != c.runs {
				t.Fatalf("ran = %v, want %v", ran, c.runs)
			}
			if keys, _ := testenv.Keys(ctx, client, prefix); len(keys) != 0 {
				t.Fatalf("left %q", keys)
			}
		})
	}
}

func fortyChars(c string) string {
	s := ""
	for len(s) < 40 {
		s += c
	}
	return s
}
