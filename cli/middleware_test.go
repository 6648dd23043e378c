package cli

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

// TestWorkForwardMiddleware: --middleware puts WithoutOverlapping in front of a class
// the binary has no Go type for: while the service runs a job its lock is held (named by
// the command's n property), and a job whose lock another worker holds is released for
// release-after, not forwarded. --middleware-file and --limiter read the same specs; a
// bad spec is refused before any job is taken.
func TestWorkForwardMiddleware(t *testing.T) {
	r := testenv.RedisServer(t)
	client := r.Client(t, 0)
	prefix := testenv.Prefix(t)
	ctx := context.Background()
	p, err := testDispatcher(client, prefix, "")
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	srv, got := forwardService(t, func(int, http.ResponseWriter) {
		keys, _ := client.Keys(ctx, prefix+"*laravel-queue-overlap:*").Result()
		for _, k := range keys {
			ttl, _ := client.TTL(ctx, k).Result()
			held = append(held, strings.TrimPrefix(k, prefix)+" "+ttl.Round(time.Minute).String())
		}
	})
	file := filepath.Join(t.TempDir(), "middleware.txt")
	if err := os.WriteFile(file, []byte("# guards\nApp\\Jobs\\Fwd=without-overlapping:n,release-after=30,expire-after=600\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"--forward", srv.URL, "--redis", "redis://" + r.Addr + "/0", "--prefix", prefix, "--stop-when-empty",
		"--database", "null", "--sleep", "0", "--laravel-version", "11.56"}
	if _, err := p.Dispatch(ctx, fwdJob{N: 1}); err != nil {
		t.Fatal(err)
	}
	out, errOut, rc := runWorkCLI(t, nil, append(base, "--middleware-file", file)...)
	if rc != 0 || len(got()) != 1 {
		t.Fatalf("rc %d, forwarded %d\n%s\n%s", rc, len(got()), out, errOut)
	}
	if len(held) != 1 || !strings.HasSuffix(held[0], `laravel-queue-overlap:App\Jobs\Fwd:1 10m0s`) {
		t.Fatalf("locks while forwarding: %q", held)
	}
	lock := prefix + strings.TrimSuffix(held[0], " 10m0s")
	if n, _ := client.Exists(ctx, lock).Result(); n != 0 {
		t.Errorf("the lock outlived the job")
	}

	// Another worker holds order 2's lock.
	if err := client.Set(ctx, strings.Replace(lock, ":1", ":2", 1), "php-owner", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Dispatch(ctx, fwdJob{N: 2}); err != nil {
		t.Fatal(err)
	}
	before := time.Now().Unix()
	out, errOut, rc = runWorkCLI(t, nil, append(base, "--middleware", `App\Jobs\Fwd=without-overlapping:n,release-after=30`,
		"--limiter", "unused=10/minute")...)
	if rc != 0 || len(got()) != 1 {
		t.Fatalf("rc %d, forwarded %d\n%s\n%s", rc, len(got()), out, errOut)
	}
	z, err := client.ZRangeWithScores(ctx, prefix+"queues:default:delayed", 0, -1).Result()
	if err != nil || len(z) != 1 || int64(z[0].Score) < before+30 || int64(z[0].Score) > time.Now().Unix()+30 {
		t.Fatalf("delayed %v %v", z, err)
	}
	if !strings.Contains(out, "released by WithoutOverlapping") {
		t.Errorf("the job line does not name the middleware:\n%s", out)
	}

	for _, bad := range [][]string{{"--middleware", `App\Jobs\Fwd=without-overlap:n`}, {"--limiter", "x=10/fortnight"},
		{"--middleware-file", filepath.Join(t.TempDir(), "missing")}} {
		if _, errOut, rc := runWorkCLI(t, nil, append(base, bad...)...); rc == 0 || !strings.Contains(errOut, bad[1][len(bad[1])-5:]) {
			t.Errorf("%v: rc %d\n%s", bad, rc, errOut)
		}
	}
}
