package middleware_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/cli"
	"github.com/laraq/laraq/internal/testenv"
)

// Jobs without a Go declaration: a PHP job with ->through([new WithoutOverlapping(...)])
// is guarded by a Go worker that registered its class untyped, and `laraq work --forward
// --middleware ...` guards a class by name, while a PHP worker holds the lock.

// holdLock dispatches job A (props) with a gate, lets a PHP worker run it until the gate
// opens, then dispatches job B (props) for another worker; the returned func opens the
// gate and waits for the PHP worker.
func holdLock(t *testing.T, f *fleet, propsA, propsB, through string) (release func()) {
	t.Helper()
	g := newGate(t)
	req := func(props string) string {
		r := strings.TrimSuffix(guardedJob(props), "}")
		if through != "" {
			r += `,"through":` + jsonString(through)
		}
		return r + "}"
	}
	f.dispatch(req(propsA + `,"wait":"` + string(g) + `"`))
	cmd, out := f.phpStart("--once")
	g.waitStarted(t)
	f.dispatch(req(propsB))
	return func() {
		g.open(t)
		f.phpWait(cmd, out)
	}
}

// TestFleetThroughNeedsNoGoDeclaration: a job PHP dispatched with ->through([new
// WithoutOverlapping('acct')]) is released by a Go worker whose handler takes the class
// untyped (HandleFunc: no type, no Middleware()), while a PHP worker holds the lock.
func TestFleetThroughNeedsNoGoDeclaration(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		needMiddleware(t, releaseOf(t, major), "WithoutOverlapping")
		f := newFleet(t, srv, major, false)
		done := holdLock(t, f, `"key":"A"`, `"key":"B"`, "[(new WithoutOverlapping('acct'))->releaseAfter(9)->expireAfter(60)]")
		before := time.Now().Unix()
		f.goRun(f.goWorker(laraq.WorkerConfig{StopWhenEmpty: true, MaxJobs: 1}, true))
		after := time.Now().Unix()
		done()
		if got := strings.Join(f.ran(), ","); got != "php A" {
			t.Errorf("ran %s, want only PHP's A", got)
		}
		for k, d := range delayedByKey(t, f) {
			if k != "B" || d.attempts != 1 || d.score-after > 9 || d.score-before < 9 {
				t.Errorf("released %s: attempts %d, due in %d..%d s; want B, 1, 9", k, d.attempts, d.score-after, d.score-before)
			}
		}
		if n := len(f.delayed()); n != 1 {
			t.Errorf("%d released, want B", n)
		}
	})
}

// TestFleetForwardMiddleware: `laraq work --forward URL --middleware
// 'App\Jobs\MiddlewareGuarded=without-overlapping:key,...'` releases, without forwarding
// it, a job whose lock a PHP worker running the class's own middleware() holds, and
// forwards one whose key is free.
func TestFleetForwardMiddleware(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		needMiddleware(t, releaseOf(t, major), "WithoutOverlapping")
		f := newFleet(t, srv, major, false)
		var mu sync.Mutex
		var forwarded []string
		svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			forwarded = append(forwarded, string(b))
			mu.Unlock()
		}))
		defer svc.Close()
		done := holdLock(t, f, `"key":"K","guard":"overlap"`, `"key":"K","guard":"overlap"`, "")
		f.dispatch(guardedJob(`"key":"free","guard":"overlap"`))
		before := time.Now().Unix()
		var out, errOut bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		rc := cli.Main(ctx, []string{"work", "--forward", svc.URL, "--redis", "redis://" + srv.Addr + "/0", "--prefix", f.side.prefix,
			"--cache-prefix", cachePrefix, "--laravel-version", f.rel.String(), "--database", "null", "--stop-when-empty", "--sleep", "0",
			"--middleware", `App\Jobs\MiddlewareGuarded=without-overlapping:key,release-after=7,expire-after=120`},
			cli.WithIO(strings.NewReader(""), &out, &errOut))
		after := time.Now().Unix()
		done()
		if rc != 0 {
			t.Fatalf("rc %d\n%s\n%s", rc, out.String(), errOut.String())
		}
		mu.Lock()
		defer mu.Unlock()
		if len(forwarded) != 1 || !strings.Contains(forwarded[0], `"key":"free"`) {
			t.Errorf("forwarded %q, want the free job alone", forwarded)
		}
		for k, d := range delayedByKey(t, f) {
			if k != "K" || d.attempts != 1 || d.score-after > 7 || d.score-before < 7 {
				t.Errorf("released %s: attempts %d, due in %d..%d s; want K, 1, 7", k, d.attempts, d.score-after, d.score-before)
			}
		}
		if n := len(f.delayed()); n != 1 || !strings.Contains(out.String(), "(released by WithoutOverlapping)") {
			t.Errorf("%d released; job lines:\n%s", n, out.String())
		}
	})
}
