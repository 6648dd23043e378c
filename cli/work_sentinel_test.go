package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// sentinelWork runs `laraq work` with env as its environment until it stops by itself.
func sentinelWork(t *testing.T, reg *laraq.Jobs, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut syncBuf
	opts := []Option{WithIO(bytes.NewReader(nil), &out, &errOut), WithGetenv(func(k string) string { return env[k] })}
	if reg != nil {
		opts = append(opts, WithJobs(reg))
	}
	rc := Main(ctx, append([]string{"work"}, args...), opts...)
	if ctx.Err() != nil {
		t.Fatalf("work did not stop by itself:\n%s\n%s", out.String(), errOut.String())
	}
	return out.String(), errOut.String(), rc
}

// TestWorkThroughSentinel: --redis-sentinel and --redis-sentinel-master reach the master
// of a real master, replica and three Sentinels; the start line names them; --redis wins
// over LARAQ_REDIS_SENTINEL (saying so), and both flags at once are refused.
func TestWorkThroughSentinel(t *testing.T) {
	testenv.NeedPHP(t)
	s := testenv.PrivateSentinels(t, "queue-master")
	prefix, queue := testenv.Prefix(t), "snt"+testenv.RandomName(3)
	dispatch := func(name string) {
		phpDispatchLines(t, testenv.PHPEnv{Redis: s.Master, Prefix: prefix},
			[]any{map[string]any{"class": `App\Jobs\PlainJob`, "queue": queue, "props": map[string]any{"name": name, "count": 1}}})
	}
	var got []string
	reg := laraq.NewJobs()
	handle(reg, `App\Jobs\PlainJob`, func(ctx context.Context, cmd *struct {
		Name string `php:"name"`
	}, job *laraq.JobInfo) error {
		got = append(got, cmd.Name)
		return nil
	})
	common := []string{"--prefix", prefix, "--queue", queue, "--stop-when-empty", "--no-cache", "--sleep", "0", "--database", "null"}
	sentinels := strings.Join(s.Addrs, ",")

	dispatch("flags")
	out, errOut, rc := sentinelWork(t, reg, nil, append([]string{"--redis-sentinel", sentinels, "--redis-sentinel-master", "queue-master"}, common...)...)
	if rc != 0 || len(got) != 1 || got[0] != "flags" {
		t.Fatalf("rc %d, ran %q\n%s\n%s", rc, got, out, errOut)
	}
	if want := "redis=\"sentinel master queue-master via " + sentinels + "/0\""; !strings.Contains(errOut, want) {
		t.Errorf("the start line does not say %s:\n%s", want, errOut)
	}

	dispatch("env")
	env := map[string]string{"LARAQ_REDIS_SENTINEL": sentinels, "LARAQ_REDIS_SENTINEL_MASTER": "queue-master"}
	out, errOut, rc = sentinelWork(t, reg, env, common...)
	if rc != 0 || len(got) != 2 {
		t.Fatalf("LARAQ_REDIS_SENTINEL: rc %d, ran %q\n%s\n%s", rc, got, out, errOut)
	}

	// --redis names the replica: it wins over the variable, and the worker says so (and
	// then fails on the read-only replica, which is not this test's business).
	env["LARAQ_REDIS_SENTINEL"] = "127.0.0.1:1"
	_, errOut, _ = sentinelWork(t, reg, env, append([]string{"--redis", "redis://" + s.Master.Addr + "/0"}, common...)...)
	if !strings.Contains(errOut, "LARAQ_REDIS_SENTINEL is ignored: --redis names the server") || !strings.Contains(errOut, "redis="+s.Master.Addr+"/0") {
		t.Errorf("--redis does not win over LARAQ_REDIS_SENTINEL:\n%s", errOut)
	}
	_, errOut, rc = sentinelWork(t, reg, nil, append([]string{"--redis", "redis://" + s.Master.Addr + "/0", "--redis-sentinel", sentinels}, common...)...)
	if rc == 0 || !strings.Contains(errOut, "--redis and --redis-sentinel are both given") {
		t.Errorf("both flags: rc %d\n%s", rc, errOut)
	}
}

// TestWorkSentinelsUnreachable: with every Sentinel unreachable, or none knowing the
// master's name, `laraq work` exits 1 at once with one line, as for refused credentials,
// instead of starting and warning forever.
func TestWorkSentinelsUnreachable(t *testing.T) {
	s := testenv.PrivateSentinels(t, "mymaster")
	for _, tc := range []struct {
		name, sentinels, master, want string
	}{
		{"unreachable", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3", "mymaster", "laraq: redis sentinel: none of the Sentinels 127.0.0.1:1,127.0.0.1:2,127.0.0.1:3 answered for master \"mymaster\": "},
		{"unknown master", strings.Join(s.Addrs, ","), "nosuchmaster", "laraq: redis sentinel: no Sentinel at " + strings.Join(s.Addrs, ",") + " knows a master named \"nosuchmaster\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			out, errOut, rc := sentinelWork(t, nil, map[string]string{"LARAQ_REDIS_SENTINEL_PASSWORD": "sentinel-secret-77"},
				"--redis-sentinel", tc.sentinels, "--redis-sentinel-master", tc.master, "--database", "null", "--laravel-version", "12")
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if rc != 1 || out != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], tc.want) {
				t.Errorf("rc %d, want 1 and one line starting %q:\n%s", rc, tc.want, errOut)
			}
			if strings.Contains(errOut, "sentinel-secret-77") {
				t.Errorf("the Sentinel password shows:\n%s", errOut)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v to fail", d)
			}
		})
	}
}

// TestSentinelNoticesOnceAtInfo: a failover while the worker runs is announced once, at
// info, though the queue's and the cache's clients (databases 0 and 1) both see it.
func TestSentinelNoticesOnceAtInfo(t *testing.T) {
	s := testenv.PrivateSentinels(t, "mymaster")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuf
	done := make(chan int, 1)
	go func() {
		done <- Main(ctx, []string{"work", "--redis-sentinel", strings.Join(s.Addrs, ","), "--database", "null", "--sleep", "0.2", "--laravel-version", "12"},
			WithIO(bytes.NewReader(nil), &out, &errOut), WithGetenv(func(string) string { return "" }))
	}()
	waitWithin(t, 20*time.Second, "worker started", func() bool { return strings.Contains(errOut.String(), "worker started") })
	s.Failover(t, 30*time.Second)
	waitWithin(t, 20*time.Second, "the new master announced", func() bool { return strings.Contains(errOut.String(), "sentinel: new master") })
	time.Sleep(2 * time.Second) // the second client's notice
	cancel()
	<-done
	log := errOut.String()
	var notices []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "sentinel: new master") {
			notices = append(notices, l)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "INFO") {
		t.Errorf("want one INFO line about the new master, got %q\n%s", notices, log)
	}
	if strings.Contains(log, "WARN  sentinel:") {
		t.Errorf("a routine Sentinel notice at WARN:\n%s", log)
	}
}

func waitWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
