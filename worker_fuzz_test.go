package laraq_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

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
	// A chain whose second continuation is corrupt: step 1 runs and dispatches step 2,
	// which fails to continue the chain, and its own payload is the failed row.
	step := `O:1:"X":0:{}`
	command := fmt.Sprintf(`O:1:"X":1:{s:7:"chained";a:2:{i:0;s:%d:"%s";i:1;s:3:"bad";}}`, len(step), step)
	quoted, _ := json.Marshal(command)
	f.Add([]byte(`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"X","command":` + string(quoted) + `},"attempts":0}`))
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
		store := &testkit.MemStore{}
		// Every payload the worker took: raw, then the next jobs of a chain it continued.
		var mu sync.Mutex
		taken := map[string]bool{string(raw): true}
		onEvent := func(e laraq.Event) {
			if e.Kind == laraq.EventProcessing && e.Job != nil {
				mu.Lock()
				taken[string(e.Job.Raw)] = true
				mu.Unlock()
			}
		}
		c, err := testkit.NewWorker(client, testkit.Setup{Prefix: prefix, Registry: reg, Failed: store,
			StopWhenEmpty: true, Logger: testkit.SlogTo(discard{}), Timeout: 5 * time.Second, OnEvent: onEvent})
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
		recs := store.All()
		// A successful run deletes the job; a failed one is recorded; an unreservable
		// one is moved aside. A released one (delay 0 retries) may still be delayed. A
		// chain has one job alive at a time: whichever step ends it is the one kept.
		kept := len(recs) + len(invalid) + int(delayed)
		if ready != 0 || reserved != 0 || (kept == 0 && ran.Load() == 0) || kept > 1 {
			t.Fatalf("payload %q: ran %d, failed %d, invalid %d, ready %d, delayed %d, reserved %d",
				raw, ran.Load(), len(recs), len(invalid), ready, delayed, reserved)
		}
		// The failed row holds the payload of the job that failed, as popped: raw, or
		// a later step of its chain that this worker dispatched and then ran.
		if len(recs) == 1 && !taken[string(recs[0].Payload)] {
			t.Fatalf("failed record holds %q, which is neither the payload nor a step of its chain", recs[0].Payload)
		}
		keys, _ := testenv.Keys(ctx, client, prefix)
		for _, k := range keys {
			client.Del(ctx, k)
		}
	})
}
