package rdb

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestHorizonBatchMatchesSeparateCalls runs the records of a worker's busy moment —
// pushes, reservations, a release, a migration, completions with metrics (monitored,
// silenced, a retry), a failure with tags — once as separate script calls in a pipeline
// and once as one HorizonBatch, and requires the same keys; then once more with a key
// of the wrong type, where the failing calls must fail alone in both.
func TestHorizonBatchMatchesSeparateCalls(t *testing.T) {
	ctx := context.Background()
	job := func(id string, mod func(*HorizonJob)) HorizonJob {
		j := HorizonJob{ID: id, Name: `App\Jobs\Send`, Connection: "redis", Queue: "default",
			Payload: []byte(`{"uuid":"` + id + `","id":"` + id + `","attempts":1}`)}
		if mod != nil {
			mod(&j)
		}
		return j
	}
	jobs := []HorizonJob{
		job("A", func(j *HorizonJob) { j.Tags = []string{"urgent", "App\\Models\\User:1"} }),
		job("B", func(j *HorizonJob) { j.Silenced = true }),
		job("C", func(j *HorizonJob) { j.RetryOf = "P" }),
		job("D", func(j *HorizonJob) { j.Tags = []string{"urgent"} }),
		job("E", nil),
	}
	records := func(e *hzEnv, s redis.Scripter) {
		t.Helper()
		h := e.h
		must := func(err error) {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, j := range jobs {
			must(h.Pushed(ctx, s, j))
		}
		for _, j := range jobs {
			_, err := h.Reserved(ctx, s, j)
			must(err)
		}
		must(h.Released(ctx, s, jobs[4]))
		must(h.Migrated(ctx, s, jobs[4]))
		for i, j := range jobs[:3] {
			must(h.Completed(ctx, s, j))
			// Runtimes whose running mean is not exact in binary: the batch's one metrics
			// call per hash must leave the very strings the single calls leave.
			h.Metrics(ctx, s, j.Queue, j.Name, e.at.Add(-time.Duration(1500+3337*i)*time.Microsecond))
		}
		must(h.Failed(ctx, s, jobs[3], Failure{Exception: "RuntimeException: boom", Context: []byte(`{"a":1}`)}))
	}
	seed := hstate{
		"monitoring": hset("urgent"),
		"P":          hhash(0, "id", "P", "status", "failed", "retried_by", `[{"id":"C","status":"pending","retried_at":1700000000}]`),
	}
	for _, broken := range []bool{false, true} {
		t.Run(fmt.Sprintf("broken=%v", broken), func(t *testing.T) {
			var states [2]hstate
			var batchErr error
			for i, batch := range []bool{false, true} {
				e := newHzEnv(t, HorizonTrim{})
				e.seed(t, seed)
				if broken {
					e.seed(t, hstate{"completed_jobs": {Type: "string", Str: new("x")}})
				}
				p := e.c.Pipeline()
				if batch {
					b := &HorizonBatch{}
					records(e, b)
					// pushed, reserved, released, migrated, completed (and C's retry status),
					// failed; the six metrics calls of three jobs merge into one per hash.
					if b.Len() != 5+5+1+1+3+1+1+2 {
						t.Fatalf("%d calls batched", b.Len())
					}
					cmd, err := b.Queue(ctx, p)
					if err != nil || b.Len() != 0 {
						t.Fatal(err, b.Len())
					}
					if _, err := p.Exec(ctx); err != nil {
						t.Fatal(err)
					}
					batchErr = HorizonBatchErrors(cmd)
				} else {
					records(e, p)
					_, _ = p.Exec(ctx)
				}
				states[i] = e.dump(t)
				for k, v := range states[i] {
					for j, m := range v.Set {
						v.Set[j] = strings.Replace(m, e.prefix, "{H}", 1)
					}
					states[i][k] = v
				}
			}
			assertHState(t, "batched", states[1], states[0])
			if broken != (batchErr != nil) || broken && !strings.Contains(batchErr.Error(), "WRONGTYPE") {
				t.Errorf("batch errors: %v", batchErr)
			}
			if got := states[1]["A"].Hash["status"]; got != "completed" && !broken {
				t.Errorf("A: %v", states[1]["A"])
			}
		})
	}

	// Only Horizon's scripts can be batched.
	b := &HorizonBatch{}
	migrateScript.EvalSha(ctx, b, []string{"k"}, 1)
	if _, err := b.Queue(ctx, newHzEnv(t, HorizonTrim{}).c); err == nil {
		t.Error("a foreign script was batched")
	}
}
