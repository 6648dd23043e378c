package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/laravel"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// libJob stands for App\Jobs\LibJob.
type libJob struct {
	N int `php:"n"`
}

func (libJob) PHPClass() string { return `App\Jobs\LibJob` }

// TestLibraryWorkerIsLaraqWork builds a library worker from the queue:work preset
// (laraq.QueueWork, pools sized by laravel.ConnectOptions.Worker) and runs `laraq work`
// with no worker flags on the same application — a Laravel 12.40 .env whose release laraq
// can only guess — and requires the same behaviour: the same Redis server, connection,
// queues, prefix, release, failed-job store, concurrency, memory limit and Redis pool in
// the start line, the same restart and pause keys watched, and the same failure texts in
// the same failed_jobs table.
func TestLibraryWorkerIsLaraqWork(t *testing.T) {
	srv := testenv.RedisServer(t)
	app := "Lib" + testenv.RandomName(3)
	dbPath := filepath.Join(t.TempDir(), "app.sqlite")
	env := envFile(t, "APP_NAME="+app, "CACHE_STORE=redis", "QUEUE_CONNECTION=redis", "REDIS_HOST=127.0.0.1",
		fmt.Sprintf("REDIS_PORT=%d", srv.Port), "DB_CONNECTION=sqlite", "DB_DATABASE="+dbPath)
	noEnv := func(string) (string, bool) { return "", false }
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The application's migration made failed_jobs.
	cfg, err := laravel.Load(laravel.App{EnvFile: env, LookupEnv: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Release.Guessed {
		t.Fatalf("release %s is not a guess", cfg.Release)
	}
	if c, err := cfg.Connect(ctx, laravel.ConnectOptions{CreateFailedTable: true}); err != nil {
		t.Fatal(err)
	} else {
		c.Close()
	}

	// One job whose tries are spent (it fails before running) per run.
	push := func(conn *laraq.Connection, n int) {
		cmd, _ := phpser.Marshal(libJob{N: n})
		raw, err := payload.BuildObject(payload.ObjectJob{CommandName: libJob{}.PHPClass(), Command: string(cmd), MaxTries: new(int64(1))}, payload.Shape{})
		if err != nil {
			t.Fatal(err)
		}
		raw = bytes.Replace(raw, []byte(`"attempts":0`), []byte(`"attempts":3`), 1)
		d, err := laraq.NewDispatcher(conn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.PushRaw(ctx, "", raw); err != nil {
			t.Fatal(err)
		}
	}
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[libJob]) error { return nil })

	// The library from the queue:work preset (with a debug JSON log to compare).
	var libLog syncBuf
	wc := laraq.QueueWork()
	wc.StopWhenEmpty = true
	wc.Logger = slog.New(slog.NewJSONHandler(&libLog, &slog.HandlerOptions{Level: slog.LevelDebug}))
	conn, err := cfg.Connect(ctx, laravel.ConnectOptions{Worker: &wc, Logger: wc.Logger})
	if err != nil {
		t.Fatal(err)
	}
	push(conn, 1)
	w, err := laraq.NewWorker(conn, jobs, wc)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatalf("library worker: %v", err)
	}
	conn.Close()

	// laraq work on the same .env.
	push(conn2(t, ctx, env, noEnv), 2)
	var out, cliLog syncBuf
	rc := Main(ctx, []string{"work", "--env-file", env, "--stop-when-empty", "--log-format", "json", "--log-level", "debug"},
		WithIO(bytes.NewReader(nil), &out, &cliLog), WithJobs(jobs), WithGetenv(func(string) string { return "" }))
	if rc != 0 {
		t.Fatalf("laraq work: %d\n%s", rc, cliLog.String())
	}

	for _, msg := range []string{"worker started", "watching the restart and pause keys"} {
		lib, cli := logRecord(t, libLog.String(), msg), logRecord(t, cliLog.String(), msg)
		for _, k := range []string{"redis", "connection", "queues", "prefix", "laravel", "failed_store", "concurrency",
			"memory_limit_mb", "redis_pool", "cache", "restart_keys", "pause_keys"} {
			if fmt.Sprint(lib[k]) != fmt.Sprint(cli[k]) {
				t.Errorf("%q %s: library %v, laraq work %v", msg, k, lib[k], cli[k])
			}
		}
	}
	if started := logRecord(t, libLog.String(), "worker started"); fmt.Sprint(started["memory_limit_mb"]) != "128" {
		t.Errorf("the queue:work preset's memory limit is %v MB, want queue:work's 128", started["memory_limit_mb"])
	}
	if keys := fmt.Sprint(logRecord(t, libLog.String(), "watching the restart and pause keys")["restart_keys"]); strings.Count(keys, "illuminate:queue:restart") < 4 {
		t.Errorf("a guessed release must watch every scheme's restart key, got %s", keys)
	}

	// Both failed their job into the application's table, with the same text.
	store, err := cfg.Connect(ctx, laravel.ConnectOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	recs, err := store.Failed.All(ctx)
	if err != nil || len(recs) != 2 {
		t.Fatalf("failed rows %d, %v", len(recs), err)
	}
	first := func(s string) string { l, _, _ := strings.Cut(s, " in "); return l }
	if a, b := first(recs[0].Exception), first(recs[1].Exception); a != b ||
		a != `Illuminate\Queue\MaxAttemptsExceededException: App\Jobs\LibJob has been attempted too many times.` {
		t.Errorf("failure texts differ or are not 10.10+'s:\n%s\n%s", a, b)
	}
}

func conn2(t *testing.T, ctx context.Context, env string, lookup func(string) (string, bool)) *laraq.Connection {
	t.Helper()
	c, err := laravel.Connect(ctx, laravel.App{EnvFile: env, LookupEnv: lookup})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// logRecord finds the JSON log record with this message.
func logRecord(t *testing.T, log, msg string) map[string]any {
	t.Helper()
	for _, line := range strings.Split(log, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == msg {
			return rec
		}
	}
	t.Fatalf("no %q record in:\n%s", msg, log)
	return nil
}

// TestCommandLineManners: what an artisan user expects of the command line.
func TestCommandLineManners(t *testing.T) {
	// help on stdout, for `help CMD` as for `CMD --help`.
	for _, args := range [][]string{{"help", "work"}, {"work", "--help"}, {"work", "-h"}} {
		out, errOut, rc := opsCLI(t, "", nil, args...)
		if rc != 0 || !strings.HasPrefix(out, "Usage: laraq work") || !strings.Contains(out, "-concurrency") || errOut != "" {
			t.Errorf("%v: rc %d, stdout %d bytes, stderr %q", args, rc, len(out), errOut)
		}
	}
	// A flag mistake is one line and a pointer to the help, not the whole usage.
	_, errOut, rc := opsCLI(t, "", nil, "work", "--bogus")
	if rc != 2 || errOut != "laraq work: flag provided but not defined: -bogus\nRun 'laraq help work' for usage.\n" {
		t.Errorf("bad flag: rc %d %q", rc, errOut)
	}
	// pause needs its queue, as queue:pause does.
	if _, errOut, rc := opsCLI(t, "", nil, "pause"); rc != 2 || !strings.Contains(errOut, "which queue?") || strings.Count(errOut, "\n") != 2 {
		t.Errorf("pause without a queue: rc %d %q", rc, errOut)
	}
	// queue:work's -v is accepted: job ids in the lines.
	srv := testenv.RedisServer(t)
	if _, errOut, rc := opsCLI(t, "", nil, "work", "-v", "--once", "--no-cache", "--database", "null",
		"--redis", fmt.Sprintf("redis://127.0.0.1:%d/0", srv.Port), "--prefix", testenv.Prefix(t)); rc != 0 {
		t.Errorf("work -v: rc %d %q", rc, errOut)
	}
	// decode | dispatch keeps INF and NAN floats as floats.
	decoded, errOut, rc := runCLI(t, []byte(`O:10:"App\Jobs\F":2:{s:1:"a";d:INF;s:1:"b";d:NAN;}`), "decode")
	if rc != 0 {
		t.Fatalf("decode: %s", errOut)
	}
	prefix := testenv.Prefix(t)
	redisURL := fmt.Sprintf("redis://127.0.0.1:%d/0", srv.Port)
	if _, errOut, rc := runCLI(t, []byte(decoded), "dispatch", "--redis", redisURL, "--prefix", prefix, "--props", "-", "--no-queueable"); rc != 0 {
		t.Fatalf("dispatch: %s", errOut)
	}
	raw := srv.Client(t, 0).LIndex(context.Background(), prefix+"queues:default", 0).Val()
	if !strings.Contains(raw, `s:1:\"a\";d:INF;s:1:\"b\";d:NAN;`) {
		t.Errorf("INF/NAN did not survive decode | dispatch: %s", raw)
	}
	// Input that is no payload says what it is not.
	if _, errOut, rc := runCLI(t, []byte("hello"), "decode"); rc != 1 || !strings.Contains(errOut, "neither JSON nor a PHP-serialized value") {
		t.Errorf("decode of text: rc %d %q", rc, errOut)
	}
}
