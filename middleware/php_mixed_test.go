package middleware_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/testenv"
	mw "github.com/laraq/laraq/middleware"
)

// waitFile waits for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", path)
}

// TestOverlapLockSharedWithPHP: while a PHP worker runs a job under WithoutOverlapping,
// the state is the one a Go worker leaves while it runs it (lock key, owner shape, TTL on
// the lock connection or the cache_locks table); a Go attempt of the same key meanwhile
// is released as a second PHP worker's would be, and the other way round.
func TestOverlapLockSharedWithPHP(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		testenv.Since(t, major, testenv.JobMiddleware)
		for _, database := range []bool{false, true} {
			t.Run(map[bool]string{false: "redis", true: "database"}[database], func(t *testing.T) {
				sc := scenario{
					php: "[(new WithoutOverlapping('order-7'))->releaseAfter(30)->expireAfter(120)]",
					goMW: func(*mw.Env) []job.Middleware {
						return list(mw.WithoutOverlapping("order-7").ReleaseAfter(30 * time.Second).ExpireAfter(2 * time.Minute))
					},
					job: namedJob, database: database,
				}
				// A holder that straddles a second took its lock at a time its outcome does
				// not say exactly: such a round is run again.
				var r overlapRound
				for try := 0; try < 6; try++ {
					if r = runOverlapRound(t, srv, major, sc); !r.straddled {
						break
					}
				}
				if r.straddled {
					t.Fatal("six rounds straddled a second")
				}
				if len(r.phpHeld) != 1 {
					t.Errorf("while PHP runs the job, the state is %s; want its one lock", showDump(r.phpHeld))
				}
				if !sameDump(r.phpHeld, r.goHeld) {
					t.Errorf("the lock while running\n  PHP: %s\n   Go: %s", showDump(r.phpHeld), showDump(r.goHeld))
				}
				if got, want := r.goGuest.String(), "ran=false released=30"; got != want {
					t.Errorf("Go's attempt while PHP holds the lock: %s, want %s", got, want)
				}
				if got, want := r.phpGuest.String(), "ran=false released=30"; got != want {
					t.Errorf("PHP's attempt while Go holds the lock: %s, want %s", got, want)
				}
				if r.phpHolder.String() != "ran=true" || r.goHolder.String() != "ran=true" {
					t.Errorf("the holders: PHP %s, Go %s", r.phpHolder, r.goHolder)
				}
				if len(r.left) != 0 {
					t.Errorf("the lock outlives its holder: %s", showDump(r.left))
				}
			})
		}
	})
}

type overlapRound struct {
	phpHeld, goHeld, left map[string]string
	phpHolder, goHolder   outcome
	phpGuest, goGuest     outcome
	straddled             bool
}

// runOverlapRound lets PHP hold the lock while Go tries, then Go hold it while PHP tries.
func runOverlapRound(t *testing.T, srv *testenv.Redis, major int, sc scenario) overlapRound {
	t.Helper()
	var r overlapRound
	guest := sc
	guest.handler = "ok"

	s := newSide(t, sc.database)
	gate := filepath.Join(t.TempDir(), "php-gate")
	holder := sc
	holder.handler = "wait:" + gate
	env, in := phpRequest(t, srv, major, holder, s, false)
	cmd := env.Command("middleware_op.php", "run")
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFile(t, gate+".started")
	held := dumpSide(t, srv, s, raw)
	r.goGuest = runGo(t, srv, major, guest, s, sc.goMW)
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("php: %v\n%s", err, stderr.String())
	}
	r.phpHolder = parsePHP(t, stdout.Bytes())
	r.phpHeld = renorm(held, r.phpHolder.Before)
	r.left = dumpSide(t, srv, s, raw)

	s2 := newSide(t, sc.database)
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		genv := goEnv(t, srv, major, s2, &o.Reported)
		info := goJob(sc.job)
		o.Before = time.Now().Unix()
		err := mw.Run(mw.WithEnv(context.Background(), genv), info, sc.goMW(genv), func(context.Context) error {
			o.Ran = true
			o.After = time.Now().Unix()
			close(started)
			<-release
			return nil
		})
		describeGo(&o, err)
		done <- o
	}()
	<-started
	held = dumpSide(t, srv, s2, raw)
	r.phpGuest = runPHP(t, srv, major, guest, s2, false)
	close(release)
	r.goHolder = <-done
	r.goHeld = renorm(held, r.goHolder.Before)
	for k, v := range dumpSide(t, srv, s2, raw) {
		r.left[k] = v
	}
	r.straddled = r.phpHolder.Before != r.phpHolder.After || r.goHolder.Before != r.goHolder.After
	return r
}

// step is one attempt of a sequence, by PHP or by Go.
type step struct {
	php     bool
	handler string
}

// runSequence runs the attempts one after the other on one side and returns their
// outcomes and the state relative to the first attempt's second. A release of an attempt
// that ran its handler (a backoff) is given as its delay; one that did not run (a limit
// or throttle refused it) as the second the window ends, relative to the same origin,
// since that, not the delay, is what does not depend on when the attempt happened. A
// sequence with an attempt that straddles a second (its clock moved on between the start
// and the decisions) is run again.
func runSequence(t *testing.T, srv *testenv.Redis, major int, sc scenario, database bool, steps []step) ([]string, map[string]string) {
	t.Helper()
	for try := 0; ; try++ {
		s := newSide(t, database)
		var origin int64
		var outs []string
		straddled := false
		for i, st := range steps {
			sc := sc
			sc.handler = st.handler
			var o outcome
			if st.php {
				o = runPHP(t, srv, major, sc, s, false)
			} else {
				o = runGo(t, srv, major, sc, s, sc.goMW)
			}
			if i == 0 {
				origin = o.Before
			}
			straddled = straddled || o.Before != o.After
			if o.Released != nil && !o.Ran {
				at := *o.Released + o.Before - origin
				o.Released = &at
			}
			outs = append(outs, o.String())
		}
		if !straddled || try == 5 {
			return outs, dumpSide(t, srv, s, origin)
		}
	}
}

// TestCountersSharedWithPHP: attempts split between PHP and Go workers count on the same
// keys — a rate limit, an exception throttle — as attempts by PHP alone: the same
// outcomes (releases compared by the second they end) and the same final state.
func TestCountersSharedWithPHP(t *testing.T) {
	srv := testenv.RedisServer(t)
	limiters := map[string]string{"three": "fn ($job) => Limit::perMinute(3)->by('shop-1')"}
	goLim := func(l *mw.Limiters) {
		l.For("three", func(*job.JobInfo) []mw.Limit { return []mw.Limit{mw.PerMinute(3).By("shop-1")} })
	}
	cases := []struct {
		name     string
		sc       scenario
		database bool
		handlers []string
		want     string // the last PHP-only outcome
	}{{
		name: "RateLimited",
		sc: scenario{php: "[new RateLimited('three')]", limiters: limiters, goLim: goLim,
			goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("three")) }},
		handlers: []string{"ok", "ok", "ok", "ok"}, want: "ran=false released=63",
	}, {
		name: "RateLimited on the database store", database: true,
		sc: scenario{php: "[new RateLimited('three')]", limiters: limiters, goLim: goLim,
			goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("three")) }},
		handlers: []string{"ok", "ok", "ok", "ok"}, want: "ran=false released=63",
	}, {
		name: "RateLimitedWithRedis",
		sc: scenario{php: "[new RateLimitedWithRedis('three')]", limiters: limiters, goLim: goLim,
			goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimitedWithRedis("three")) }},
		handlers: []string{"ok", "ok", "ok", "ok"}, want: "ran=false released=63",
	}, {
		name: "ThrottlesExceptions",
		sc: scenario{phpFor: func(r job.Release) string { return "[" + throttles("ThrottlesExceptions")(r) + "]" },
			goMW: func(*mw.Env) []job.Middleware { return list(mw.ThrottlesExceptions(2, 300*time.Second)) }},
		handlers: []string{"throw", "throw", "throw"}, want: "ran=false released=303",
	}, {
		name: "ThrottlesExceptionsWithRedis",
		sc: scenario{phpFor: func(r job.Release) string { return "[" + throttles("ThrottlesExceptionsWithRedis")(r) + "]" },
			goMW: func(*mw.Env) []job.Middleware { return list(mw.ThrottlesExceptionsWithRedis(2, 300*time.Second)) }},
		handlers: []string{"throw", "throw", "throw"}, want: "ran=false released=300",
	}}
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		testenv.Since(t, major, testenv.JobMiddleware)
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				tc.sc.job = plainJob
				var phpOnly, mixed, goFirst []step
				for i, h := range tc.handlers {
					phpOnly = append(phpOnly, step{php: true, handler: h})
					mixed = append(mixed, step{php: i%2 == 0, handler: h})
					goFirst = append(goFirst, step{php: i%2 == 1, handler: h})
				}
				want, wantState := runSequence(t, srv, major, tc.sc, tc.database, phpOnly)
				if last := want[len(want)-1]; last != tc.want {
					t.Fatalf("PHP alone ends with %s, want %s", last, tc.want)
				}
				for name, steps := range map[string][]step{"PHP first": mixed, "Go first": goFirst} {
					got, gotState := runSequence(t, srv, major, tc.sc, tc.database, steps)
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("%s: outcomes\n  PHP alone: %q\n      mixed: %q", name, want, got)
					}
					if !sameDump(gotState, wantState) {
						t.Errorf("%s: state\n  PHP alone: %s\n      mixed: %s", name, showDump(wantState), showDump(gotState))
					}
				}
			})
		}
	})
}
