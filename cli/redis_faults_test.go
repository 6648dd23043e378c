package cli

import (
	"context"
	"encoding/json"
	"net"
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

// TestRefusedCredentialsFailFast: with a wrong Redis password every command, `work`
// included, fails at once with one line naming the server and not the password; `work`
// exits 3 (laraq.ExitRedisSetup), the others 1.
func TestRefusedCredentialsFailFast(t *testing.T) {
	srv := testenv.RedisServer(t)
	admin := srv.Client(t, 0)
	user := "lq" + testenv.RandomName(6)
	if err := admin.Do(t.Context(), "acl", "setuser", user, "on", ">right-pw", "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "acl", "deluser", user) })
	url := "redis://" + user + ":wrong-pw@" + srv.Addr + "/0"
	for _, args := range [][]string{
		{"stats", "--redis", url},
		{"clear", "--redis", url, "--force", "default"},
		{"work", "--redis", url, "--database", "null", "--log-format", "json"},
	} {
		t.Run(args[0], func(t *testing.T) {
			t0 := time.Now()
			_, stderr, rc := runCLI(t, nil, args...)
			want := 1
			if args[0] == "work" {
				want = laraq.ExitRedisSetup
			}
			if rc != want || time.Since(t0) > 3*time.Second {
				t.Fatalf("exit %d after %v, want %d at once:\n%s", rc, time.Since(t0), want, stderr)
			}
			last := strings.TrimSpace(stderr)
			if i := strings.LastIndexByte(last, '\n'); i >= 0 {
				last = last[i+1:]
			}
			if !strings.Contains(last, "redis at "+srv.Addr+"/0 refused the credentials") || strings.Contains(stderr, "wrong-pw") {
				t.Fatalf("stderr:\n%s", stderr)
			}
		})
	}
}

// TestWorkLogIsAllJSONWithRedisDown: with Redis unreachable, every line `work
// --log-format json` writes to stderr is JSON, go-redis' own lines included (its failed
// dials are debug lines: the worker's own error says the same).
func TestWorkLogIsAllJSONWithRedisDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, done := mainAsync(ctx, []string{"work", "--redis", "redis://" + addr + "/0", "--database", "null",
		"--log-format", "json", "--log-level", "debug", "--concurrency", "4"}, WithJobs(laraq.NewJobs()))
	waitFor(t, "go-redis' own complaint", func() bool { return strings.Contains(stderr.String(), `"source":"go-redis"`) })
	cancel()
	<-done
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	for _, line := range lines {
		if !json.Valid([]byte(line)) {
			t.Errorf("not JSON: %s", line)
		}
	}
	t.Logf("%d stderr lines, all JSON", len(lines))
}
