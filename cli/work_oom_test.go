package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// TestWorkHealthUnderMaxmemory: with Redis at maxmemory under noeviction every pop is
// refused. /healthz says the worker cannot take jobs and why for as long as that lasts
// (Redis still answers a PING), the worker does not take the refusal for a lost reply,
// and once memory is freed the job runs and /healthz turns 200.
func TestWorkHealthUnderMaxmemory(t *testing.T) {
	srv := testenv.PrivateRedis(t, "--maxmemory", "4mb", "--maxmemory-policy", "noeviction")
	client := srv.Client(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := testDispatcher(client, "", "oom")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Dispatch(ctx, oomJob{N: 1}); err != nil {
		t.Fatal(err)
	}
	// One script's writes pass the limit: Redis checks only a script's first write.
	if err := client.Eval(ctx, "for i = 1, 60 do redis.call('SET', 'big:'..i, string.rep('x', 100000)) end return 1", nil).Err(); err != nil {
		t.Fatal(err)
	}
	if err := client.RPush(ctx, "probe", "x").Err(); err == nil || !strings.HasPrefix(err.Error(), "OOM") {
		t.Fatalf("Redis is not out of memory: %v", err)
	}

	var ran atomic.Int32
	reg := laraq.NewJobs()
	handle(reg, `App\Jobs\OOMJob`, func(ctx context.Context, cmd *oomJob, job *laraq.JobInfo) error { ran.Add(1); return nil })
	_, stderr, done := mainAsync(ctx, []string{"work", "--redis", "redis://" + srv.Addr + "/0", "--queue", "oom", "--no-cache", "--database", "null",
		"--sleep", "0.1", "--log-format", "json", "--metrics-addr", "127.0.0.1:0"}, WithJobs(reg))
	waitFor(t, "worker start", func() bool { return strings.Contains(stderr.String(), "worker started") })
	addr := regexp.MustCompile(`"serving metrics","addr":"([^"]+)"`).FindStringSubmatch(stderr.String())
	if addr == nil {
		t.Fatalf("no metrics address in the log:\n%s", stderr.String())
	}
	type health struct {
		Healthy bool   `json:"healthy"`
		Refused bool   `json:"redis_refuses_pops"`
		Reason  string `json:"reason"`
	}
	get := func() (int, health) {
		c := http.Client{Timeout: 5 * time.Second}
		resp, err := c.Get("http://" + addr[1] + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var h health
		if err := json.Unmarshal(b, &h); err != nil {
			t.Fatalf("/healthz: %s: %v", b, err)
		}
		return resp.StatusCode, h
	}
	waitWithin(t, 10*time.Second, "/healthz 503", func() bool { code, _ := get(); return code == http.StatusServiceUnavailable })
	// It stays so past the heartbeat's PINGs, which Redis answers.
	for range 30 {
		code, h := get()
		if code != http.StatusServiceUnavailable || !h.Refused || !strings.Contains(h.Reason, "cannot take jobs: redis is out of memory") {
			t.Fatalf("/healthz %d %+v while Redis refuses every pop", code, h)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if ran.Load() != 0 {
		t.Fatal("the job ran while Redis refused every pop")
	}

	if err := client.Eval(ctx, "for i = 1, 60 do redis.call('DEL', 'big:'..i) end return 1", nil).Err(); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, 60*time.Second, "the job to run", func() bool { return ran.Load() == 1 })
	waitWithin(t, 10*time.Second, "/healthz 200", func() bool { code, _ := get(); return code == http.StatusOK })
	cancel()
	<-done
	log := stderr.String()
	if strings.Contains(log, "reply was lost") {
		t.Errorf("a refused pop was taken for a lost reply:\n%s", log)
	}
	if !strings.Contains(log, "OOM command not allowed") {
		t.Errorf("the refusal is not in the log:\n%s", log)
	}
}

type oomJob struct {
	N int `php:"n"`
}

func (oomJob) PHPClass() string { return `App\Jobs\OOMJob` }
