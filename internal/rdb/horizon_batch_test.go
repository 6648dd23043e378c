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
			unix := time.Now().Unix()
			for i, batch := range []bool{false, true} {
				e := newHzEnvAt(t, HorizonTrim{}, unix)
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
				states[i] = e.dumpUnprefixed(t)
			}
			assertSameHState(t, "batched", states[1], states[0])
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

// TestHorizonReservedCompletedMatchesTwoCalls: ReservedCompleted leaves what Reserved
// followed by Completed at the same moment leaves — for a job Horizon pushed, one it
// adopts, a monitored, a silenced and a retried one, alone and in a batch — and fails
// where they fail when a key has the wrong type.
func TestHorizonReservedCompletedMatchesTwoCalls(t *testing.T) {
	ctx := context.Background()
	base := HorizonJob{ID: "J", Name: `App\Jobs\Send`, Connection: "redis", Queue: "default",
		Payload: []byte(`{"uuid":"J","id":"J","attempts":1}`)}
	cases := []struct {
		name   string
		pushed bool
		seed   hstate
		mod    func(*HorizonJob)
	}{
		{name: "pushed", pushed: true},
		{name: "adopted"},
		{name: "monitored", pushed: true, seed: hstate{"monitoring": hset("urgent")},
			mod: func(j *HorizonJob) { j.Tags = []string{"other", "urgent"} }},
		{name: "silenced", mod: func(j *HorizonJob) { j.Silenced = true }},
		{name: "retry", pushed: true, seed: hstate{"P": hhash(0, "id", "P", "retried_by", `[{"id":"J","status":"pending","retried_at":1700000000}]`)},
			mod: func(j *HorizonJob) { j.RetryOf = "P" }},
		{name: "broken completed_jobs", pushed: true, seed: hstate{"completed_jobs": {Type: "string", Str: new("x")}}},
		{name: "broken job hash", seed: hstate{"J": {Type: "string", Str: new("x")}}},
	}
	for _, c := range cases {
		for _, batch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s batch=%v", c.name, batch), func(t *testing.T) {
				job := base
				if c.mod != nil {
					c.mod(&job)
				}
				var states [2]hstate
				var errs [2]int
				unix := time.Now().Unix()
				for i, together := range []bool{false, true} {
					e := newHzEnvAt(t, HorizonTrim{Completed: 7, Monitored: 90}, unix)
					e.seed(t, c.seed)
					if c.pushed {
						e.pipe(t, func(p redis.Pipeliner) error { return e.h.Pushed(ctx, p, job) })
					}
					p := e.c.Pipeline()
					var s redis.Scripter = p
					b := &HorizonBatch{}
					if batch {
						s = b
					}
					if together {
						if _, err := e.h.ReservedCompleted(ctx, s, job); err != nil {
							t.Fatal(err)
						}
					} else {
						if _, err := e.h.Reserved(ctx, s, job); err != nil {
							t.Fatal(err)
						}
						if err := e.h.Completed(ctx, s, job); err != nil {
							t.Fatal(err)
						}
					}
					var cmd *redis.Cmd
					if batch {
						var err error
						if cmd, err = b.Queue(ctx, p); err != nil {
							t.Fatal(err)
						}
					}
					cmds, _ := p.Exec(ctx)
					for _, c := range cmds {
						if c.Err() != nil && !isNil(c.Err()) {
							errs[i]++
						}
					}
					if batch && HorizonBatchErrors(cmd) != nil {
						errs[i]++
					}
					states[i] = e.dump(t)
				}
				assertSameHState(t, "ReservedCompleted", states[1], states[0])
				broken := strings.HasPrefix(c.name, "broken")
				if (errs[1] > 0) != broken || (errs[0] > 0) != broken {
					t.Errorf("errors: two calls %d, one call %d", errs[0], errs[1])
				}
				if !broken && states[1]["J"].Hash["status"] != "completed" {
					t.Errorf("J: %+v", states[1]["J"])
				}
			})
		}
	}
}

// TestHorizonCompletedGroupMatchesSeparateCalls: completions that share their queue,
// name, lists and expiries go as one group in a batch (their shared keys and arguments
// once); the group leaves what the separate calls leave — for jobs Horizon pushed and
// adopted ones, a monitored one, one whose hash has the wrong type (failing alone, the
// jobs after it still recorded) — and a completion that differs (no reservation) starts
// a group of its own.
func TestHorizonCompletedGroupMatchesSeparateCalls(t *testing.T) {
	ctx := context.Background()
	job := func(id string, tags ...string) HorizonJob {
		return HorizonJob{ID: id, Name: `App\Jobs\Send`, Connection: "redis", Queue: "default", Tags: tags,
			Payload: []byte(`{"uuid":"` + id + `","id":"` + id + `","attempts":1}`)}
	}
	jobs := []HorizonJob{job("J1"), job("J2"), job("J3", "other", "urgent"), job("J4"), job("J5", "a", "b"), job("J6")}
	pushed := map[string]bool{"J1": true, "J3": true, "J6": true, "J8": true}
	seed := hstate{"monitoring": hset("urgent"), "J4": {Type: "string", Str: new("x")}}
	records := func(e *hzEnv, s redis.Scripter) {
		for _, j := range jobs {
			if _, err := e.h.ReservedCompleted(ctx, s, j); err != nil {
				t.Fatal(err)
			}
			e.h.Metrics(ctx, s, j.Queue, j.Name, e.at.Add(-3*time.Millisecond))
		}
		if err := e.h.Completed(ctx, s, job("J7")); err != nil {
			t.Fatal(err)
		}
		if _, err := e.h.ReservedCompleted(ctx, s, job("J8")); err != nil {
			t.Fatal(err)
		}
	}
	var states [2]hstate
	var errs [2]error
	unix := time.Now().Unix()
	for i, batch := range []bool{false, true} {
		e := newHzEnvAt(t, HorizonTrim{Completed: 7, Monitored: 90}, unix)
		e.seed(t, seed)
		e.pipe(t, func(p redis.Pipeliner) error {
			for _, j := range append(jobs, job("J7"), job("J8")) {
				if pushed[j.ID] {
					if err := e.h.Pushed(ctx, p, j); err != nil {
						return err
					}
				}
			}
			return nil
		})
		p := e.c.Pipeline()
		if batch {
			b := &HorizonBatch{}
			records(e, b)
			// J1-J6 in one group, J7 (no reservation) and J8 in groups of their own, and
			// the two metrics hashes.
			if b.Len() != 3+2 {
				t.Errorf("%d calls batched, want 5", b.Len())
			}
			cmd, err := b.Queue(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			errs[i] = HorizonBatchErrors(cmd)
		} else {
			records(e, p)
			cmds, _ := p.Exec(ctx)
			for _, c := range cmds {
				if c.Err() != nil && !isNil(c.Err()) {
					errs[i] = c.Err()
				}
			}
		}
		states[i] = e.dumpUnprefixed(t)
	}
	assertSameHState(t, "group", states[1], states[0])
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Errorf("run %d: the broken hash's error: %v", i, err)
		}
	}
	for _, id := range []string{"J1", "J2", "J3", "J5", "J6", "J7", "J8"} {
		if got := states[1][id].Hash["status"]; got != "completed" {
			t.Errorf("%s: status %q", id, got)
		}
	}
	if m := states[1]["monitored_jobs"].ZSet; len(m) != 1 || m[0].Member != "J3" {
		t.Errorf("monitored jobs: %+v", m)
	}
}

// dumpUnprefixed is dump with the prefix in set members (the measured sets hold prefixed
// key names) written {H}: two environments' states compare.
func (e *hzEnv) dumpUnprefixed(t *testing.T) hstate {
	t.Helper()
	state := e.dump(t)
	for k, v := range state {
		for j, m := range v.Set {
			v.Set[j] = strings.Replace(m, e.prefix, "{H}", 1)
		}
		state[k] = v
	}
	return state
}
