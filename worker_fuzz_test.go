package laraq_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	laravelpayloads "github.com/laraq/laraq/testdata/laravel-payloads"
)

// FuzzNoPayloadIsLost pushes arbitrary bytes onto a queue and runs the worker: whatever
// they are, the worker must not panic, and the job must end up run, in the failed store
// or in the invalid list — never silently gone, never left behind.
func FuzzNoPayloadIsLost(f *testing.F) {
	// The real payloads of testdata/laravel-payloads, the cut-off S3-partial included.
	ids := laravelpayloads.IDs()
	if len(ids) < 15 {
		f.Fatalf("only %d payloads found: %v", len(ids), ids)
	}
	for _, id := range ids {
		b, err := laravelpayloads.Read(id)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		``, `null`, `[]`, `{}`, `{"attempts":0}`, `{"attempts":"1","job":"A@b","data":[]}`,
		`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"X","command":"O:1:\"X\":0:{}"},"attempts":0,"maxTries":0}`,
		`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"X","command":"O:1:\"X\":1:{s:1:\"a\";i:}"},"attempts":0}`,
		`{"job":"A@b","attempts":1e400}`, `{"job":"A@b","attempts":0,"retryUntil":1,"uuid":"u"}`,
		`{"job":"A@b","attempts":0,"timeout":-5,"backoff":"x,y","maxExceptions":0,"uuid":"u"}`,
	} {
		f.Add([]byte(s))
	}
	srv := testenv.RedisServer(f)
	client := srv.Client(f, 0)
	f.Fuzz(func(t *testing.T, raw []byte) {
		prefix := testenv.Prefix(t)
		r, err := rdb.New(client, rdb.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if err := r.Push(ctx, "default", raw); err != nil {
			t.Fatal(err)
		}
		var ran atomic.Int32
		reg := laraq.NewJobs()
		reg.Fallback(func(ctx context.Context, job *laraq.JobInfo) error {
			ran.Add(1)
			var v any
			return job.Bind(&v)
		})
		store := &memStore{}
		c, err := newWorker(client, setup{Prefix: prefix, Registry: reg, Failed: store,
			StopWhenEmpty: true, Logger: slogTo(discard{}), Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
			t.Fatalf("Run = %v", err)
		}
		invalid, err := r.Invalid(ctx, "default")
		if err != nil {
			t.Fatal(err)
		}
		ready, delayed, reserved, err := r.Sizes(ctx, "default")
		if err != nil {
			t.Fatal(err)
		}
		recs := store.all()
		// A successful run deletes the job; a failed one is recorded; an unreservable
		// one is moved aside. A released one (delay 0 retries) may still be delayed.
		kept := len(recs) + len(invalid) + int(delayed)
		if ready != 0 || reserved != 0 || (kept == 0 && ran.Load() == 0) || kept > 1 {
			t.Fatalf("payload %q: ran %d, failed %d, invalid %d, ready %d, delayed %d, reserved %d",
				raw, ran.Load(), len(recs), len(invalid), ready, delayed, reserved)
		}
		if len(recs) == 1 && string(recs[0].Payload) != string(raw) {
			t.Fatalf("failed record holds %q, not the payload", recs[0].Payload)
		}
		keys, _ := testenv.Keys(ctx, client, prefix)
		for _, k := range keys {
			client.Del(ctx, k)
		}
	})
}
