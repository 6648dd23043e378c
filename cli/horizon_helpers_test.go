package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/testenv"
)

// The Horizon interop tests of the CLI: stories of jobs dispatched, retried and
// monitored by laravel/horizon's own PHP code (testdata/php/horizon/op.php on the
// Laravel 10 and 11 peers), worked once by Horizon's PHP worker path and once by
// `laraq work` with the Go handlers below, then read back through Horizon's
// repositories and controllers.

// hzStep is Laraq\HorizonTest\Step (testdata/php/horizon/jobs.php) and its subclasses:
// one action of its plan per attempt.
type hzStep struct {
	Plan  []string `php:"plan"`
	Tries int      `php:"tries"`
}

// hzSteps registers the Go handlers of the Step classes, which do what Step::handle
// does: ok returns, release releases at once, throw throws "boom on attempt N", and
// throw-unless-retry throws unless the payload is a dashboard retry.
func hzSteps() *laraq.Jobs {
	reg := laraq.NewJobs()
	for _, class := range []string{"Step", "QuietStep", "MarkedQuietStep", "TaggedStep"} {
		handle(reg, `Laraq\HorizonTest\`+class, func(ctx context.Context, cmd *hzStep, job *laraq.JobInfo) error {
			action := "ok"
			if job.Attempt <= len(cmd.Plan) {
				action = cmd.Plan[job.Attempt-1]
			}
			if action == "throw-unless-retry" {
				action = "throw"
				if _, retry := job.Payload.Get("retry_of"); retry {
					action = "ok"
				}
			}
			switch action {
			case "release":
				return laraq.ReleaseAfter(0)
			case "throw":
				return fmt.Errorf("boom on attempt %d", job.Attempt)
			}
			return nil
		})
	}
	return reg
}

// hzJob is one job of a story, as op.php dispatch takes it.
type hzJob struct {
	Kind  string   `json:"kind,omitempty"`
	Plan  []string `json:"plan,omitempty"`
	Tries int      `json:"tries,omitempty"`
	User  *int     `json:"user,omitempty"`
	Users []int    `json:"users,omitempty"`
}

// hzStep of a story: dispatch jobs through Horizon's PHP queue, retry a failed job from
// the dashboard (the token of the job), or work the queue until it is empty.
type hzStoryStep struct {
	dispatch []hzJob
	retry    string
	work     bool
}

// hzApp is a Laravel application that uses Horizon, on the harness's Redis: a root with
// a .env, a composer.json requiring laravel/horizon and a config/horizon.php, which
// `laraq work --laravel-root` reads.
type hzApp struct {
	php    testenv.HorizonPHP
	root   string
	client *redis.Client
	dbPath string
	ids    []string // job ids in dispatch and retry order: token J<n> is ids[n-1]
}

var hzStockTrim = map[string]int{"recent": 60, "pending": 60, "completed": 60, "recent_failed": 10080, "failed": 10080, "monitored": 10080}

// hzPeerVersion is the framework release of each Horizon peer.
var hzPeerVersion = map[int]string{10: "10.50.3", 11: "11.56.0"}

func newHzApp(t *testing.T, major int, silenced []string) *hzApp {
	t.Helper()
	srv := testenv.RedisServer(t)
	base := "lq" + testenv.RandomName(4)
	a := &hzApp{
		php: testenv.HorizonPHP{Major: major, Redis: srv, Prefix: base + "_database_", HorizonPrefix: base + "_horizon:",
			Silenced: silenced, Trim: hzStockTrim},
		root:   t.TempDir(),
		client: srv.Client(t, 0),
	}
	a.dbPath = filepath.Join(a.root, "database.sqlite")
	var quoted []string
	for _, s := range silenced {
		quoted = append(quoted, "        '"+strings.ReplaceAll(s, `\`, `\\`)+"',")
	}
	files := map[string]string{
		".env": strings.Join([]string{"APP_NAME=HorizonApp", "QUEUE_CONNECTION=redis", "REDIS_HOST=127.0.0.1",
			"REDIS_PORT=" + strconv.Itoa(srv.Port), "REDIS_PREFIX=" + a.php.Prefix, "HORIZON_PREFIX=" + a.php.HorizonPrefix,
			"DB_CONNECTION=sqlite", "DB_DATABASE=" + a.dbPath}, "\n") + "\n",
		"composer.json": `{"require": {"php": "^8.2", "laravel/framework": "^` + strconv.Itoa(major) + `.0", "laravel/horizon": "^5.29"}}` + "\n",
		"config/horizon.php": `<?php

use Illuminate\Support\Str;

return [
    'use' => 'default',
    'prefix' => env('HORIZON_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_horizon:'),
    'trim' => [
        'recent' => 60,
        'pending' => 60,
        'completed' => 60,
        'recent_failed' => 10080,
        'failed' => 10080,
        'monitored' => 10080,
    ],
    'silenced' => [
` + strings.Join(quoted, "\n") + `
    ],
];
`,
	}
	for name, body := range files {
		p := filepath.Join(a.root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if keys, _ := testenv.Keys(ctx, a.client, base); len(keys) > 0 {
			a.client.Del(ctx, keys...)
		}
	})
	return a
}

// workArgs are the arguments of `laraq work` on the application.
func (a *hzApp) workArgs(extra ...string) []string {
	return append([]string{"work", "--laravel-root", a.root, "--laravel-version", hzPeerVersion[a.php.Major],
		"--no-cache", "--create-failed-table", "--log-format", "json", "--sleep", "0.05"}, extra...)
}

// noEnv is a process environment without LARAQ_* or REDIS_* settings of the machine.
func noEnv(string) string { return "" }

// goWork runs `laraq work` until the queue is empty (ready, delayed and reserved), then
// stops it as SIGTERM would and requires exit status 0.
func (a *hzApp) goWork(t *testing.T, reg *laraq.Jobs, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, stderr, done := mainAsync(ctx, a.workArgs(extra...), WithJobs(reg), WithGetenv(noEnv))
	deadline := time.Now().Add(30 * time.Second)
	for a.pending(t) > 0 {
		select {
		case rc := <-done:
			t.Fatalf("laraq work exited with %d before the queue was empty:\n%s", rc, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue is not empty after 30 s:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if rc := <-done; rc != 0 {
		t.Fatalf("laraq work: exit status %d:\n%s", rc, stderr.String())
	}
	return stderr.String()
}

// pending counts the jobs of queues:default, ready, delayed or reserved.
func (a *hzApp) pending(t *testing.T) int64 {
	t.Helper()
	ctx := context.Background()
	q := a.php.Prefix + "queues:default"
	p := a.client.Pipeline()
	l, d, r := p.LLen(ctx, q), p.ZCard(ctx, q+":delayed"), p.ZCard(ctx, q+":reserved")
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	return l.Val() + d.Val() + r.Val()
}

// play runs a story: PHP's worker path, or `laraq work` when reg is not nil.
func (a *hzApp) play(t *testing.T, monitor []string, steps []hzStoryStep, reg *laraq.Jobs) {
	t.Helper()
	if len(monitor) > 0 {
		a.php.Run(t, "monitor", map[string]any{"tags": monitor}, nil)
	}
	for _, step := range steps {
		switch {
		case step.dispatch != nil:
			var out []struct{ ID string }
			a.php.Run(t, "dispatch", map[string]any{"jobs": step.dispatch}, &out)
			for _, o := range out {
				a.ids = append(a.ids, o.ID)
			}
		case step.retry != "":
			var out struct{ ID string }
			a.php.Run(t, "retry", map[string]any{"id": a.id(t, step.retry)}, &out)
			a.ids = append(a.ids, out.ID)
		case step.work && reg != nil:
			a.goWork(t, reg)
		case step.work:
			var out struct{ Runs int }
			a.php.Run(t, "work", map[string]any{}, &out)
		}
	}
}

func (a *hzApp) id(t *testing.T, token string) string {
	t.Helper()
	n, err := strconv.Atoi(strings.TrimPrefix(token, "J"))
	if err != nil || n < 1 || n > len(a.ids) {
		t.Fatalf("no job %s", token)
	}
	return a.ids[n-1]
}

// readBack returns the raw Horizon keys and what the dashboard shows, normalised
// (testenv.HorizonNormaliser) and with the order of equal-time entries left out: a Go
// worker migrates released jobs at its own pace, so jobs finish in another order than
// under PHP's worker, which the lists' scores (normalised away) reflect. Exception texts
// become EXCEPTION: Go's and PHP's name their own frames (see assertFailedTexts).
func (a *hzApp) readBack(t *testing.T, tags []string) (raw, dash map[string]any) {
	t.Helper()
	keys := testenv.DumpKeys(t, a.client, a.php.HorizonPrefix)
	var out any
	a.php.Run(t, "read", map[string]any{"ids": a.ids, "tags": tags, "snapshot": true}, &out)
	n := testenv.NewHorizonNormaliser(a.ids, nil, a.php.HorizonPrefix, a.php.Prefix)
	n.Keep = func(key, v string) string {
		if key == "exception" && v != "" {
			return "EXCEPTION"
		}
		return ""
	}
	raw = unordered("", n.JSON(t, keys)).(map[string]any)
	dash = unordered("", n.Value("", out)).(map[string]any)
	return raw, dash
}

// unordered sorts what only the timing orders: zset members, the dashboard's job lists
// (without their index) and tag pages.
func unordered(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = unordered(k, x)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = unordered(key, x)
		}
		switch key {
		case "zset", "recent", "pending", "completed", "silenced", "failed", "jobs", "failed_jobs", "index":
			for _, x := range v {
				if m, ok := x.(map[string]any); ok && key != "zset" && key != "index" {
					delete(m, "index")
				}
			}
			sort.SliceStable(v, func(i, j int) bool { return fmt.Sprint(v[i]) < fmt.Sprint(v[j]) })
		}
		return v
	}
	return v
}

// failedRows reads the application's failed_jobs table.
func (a *hzApp) failedRows(t *testing.T) []failed.Record {
	t.Helper()
	ctx := context.Background()
	store, err := database.Open(ctx, "sqlite:"+a.dbPath, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rows, err := store.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// assertFailedTexts requires the exception Horizon shows for each failed job to be the
// text of its failed_jobs row, as with PHP, where both come from the same JobFailed.
func (a *hzApp) assertFailedTexts(t *testing.T, wantFailures int) {
	t.Helper()
	ctx := context.Background()
	rows := a.failedRows(t)
	if len(rows) != wantFailures {
		t.Fatalf("%d failed_jobs rows, want %d", len(rows), wantFailures)
	}
	for _, row := range rows {
		text, err := a.client.HGet(ctx, a.php.HorizonPrefix+row.UUID, "exception").Result()
		if errors.Is(err, redis.Nil) {
			t.Errorf("failed job %s has no exception in Horizon", row.UUID)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if text != row.Exception || !strings.Contains(text, "boom on attempt") {
			t.Errorf("failed job %s: Horizon shows\n%s\nfailed_jobs has\n%s", row.UUID, text, row.Exception)
		}
	}
}
