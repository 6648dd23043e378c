package cli

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// TestWorkHealthWithinASecondOfAStall stalls Redis (SIGSTOP, every connection left
// open) under a running `laraq work`: /healthz turns 503 within about a second of Redis
// not answering, and 200 within about a second of it answering again.
func TestWorkHealthWithinASecondOfAStall(t *testing.T) {
	srv := testenv.PrivateRedis(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, stderr, done := mainAsync(ctx, []string{"work", "--redis", "redis://" + srv.Addr + "/0", "--no-cache", "--database", "null",
		"--sleep", "0.05", "--log-format", "json", "--metrics-addr", "127.0.0.1:0"}, WithJobs(laraq.NewJobs()))
	waitFor(t, "worker start", func() bool { return strings.Contains(stderr.String(), "worker started") })
	addr := regexp.MustCompile(`"serving metrics","addr":"([^"]+)"`).FindStringSubmatch(stderr.String())
	if addr == nil {
		t.Fatalf("no metrics address in the log:\n%s", stderr.String())
	}
	code := func() int {
		c := http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get("http://" + addr[1] + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// until polls /healthz every 100 ms and returns how long it took to answer want.
	until := func(want int, limit time.Duration) time.Duration {
		t.Helper()
		t0 := time.Now()
		for code() != want {
			if time.Since(t0) > limit {
				t.Fatalf("/healthz not %d after %v\n%s", want, limit, stderr.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		return time.Since(t0)
	}
	until(http.StatusOK, 10*time.Second)
	for _, stall := range []time.Duration{3 * time.Second, 5 * time.Second} {
		srv.Stall(t, stall)
		t0 := time.Now()
		down := until(http.StatusServiceUnavailable, stall)
		until(http.StatusOK, 10*time.Second)
		up := time.Since(t0) - stall
		t.Logf("%v stall: 503 after %v, 200 again %v after it ended", stall, down.Round(time.Millisecond), up.Round(time.Millisecond))
		if down > 1500*time.Millisecond || up > 1500*time.Millisecond {
			t.Errorf("%v stall: 503 after %v, 200 again %v after it ended; want both within about a second", stall, down, up)
		}
	}
	cancel()
	if rc := <-done; rc != 0 {
		t.Fatalf("exit %d\n%s", rc, stderr.String())
	}
}
