package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/laraq/laraq"
	"github.com/laraq/laraq/artisanlog"
	"github.com/laraq/laraq/cli"
	"github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/phpser"
	laravelpayloads "github.com/laraq/laraq/testdata/laravel-payloads"
	"github.com/redis/go-redis/v9"
)

// demoCommand is `laraq demo`. It lives here, not in package cli, so that a team's own
// binary built on cli.Run carries neither miniredis nor the recorded payloads.
var demoCommand = &cli.Command{Name: "demo", Summary: "run Laravel jobs through Go handlers on an in-memory Redis (needs nothing else)", Run: runDemo}

const demoUsage = `demo [flags]

Shows laraq at work without Redis, PHP or a network: an in-memory Redis (miniredis)
receives jobs exactly as a Laravel 8 application queued them (payloads recorded from
Laravel 8.83, see testdata/laravel-payloads), and a Go worker runs them through typed Go
handlers, printing queue:work's lines: a job with an Eloquent model (ModelIdentifier), one
with protected and private properties, a string job, a chain, a job that fails its first
attempt and succeeds after a 1 s backoff, one that fails for good and lands in a SQLite
failed-job store (a temporary file, listed as 'laraq failed list' shows it), and a job
delayed by 2 s. It ends with a summary and exit status 0 when everything happened as
Laravel's worker would have done it.`

// demoDelay is how long the demo's delayed job waits; demoBackoff the retried job's.
const (
	demoDelay   = 2 * time.Second
	demoBackoff = 1
	demoTimeout = 12 * time.Second
)

// The demo's Go side of the Laravel 8 job classes (testdata/php/jobs.php): fields take
// PHP properties by name, whatever their visibility.
type (
	demoModelJob struct {
		User phpser.ModelIdentifier `php:"user"` // public $user, an Eloquent model
		Note string                 `php:"note"`
	}
	demoVisibilityJob struct {
		Pub  string `php:"pub"`
		Prot int64  `php:"prot"` // protected $prot
		Priv []any  `php:"priv"` // private $priv
	}
	demoPlainJob struct {
		Name string   `php:"name"`
		Tags []string `php:"tags"`
	}
	demoNumbersJob struct {
		Big    float64 `php:"big"`
		MaxInt int64   `php:"maxInt"`
	}
	demoNamedJob struct {
		Name string `php:"name"`
	}
	demoChainStep struct {
		Step int `php:"step"`
	}
)

func (demoModelJob) PHPClass() string      { return `App\Jobs\ModelJob` }
func (demoVisibilityJob) PHPClass() string { return `App\Jobs\VisibilityJob` }
func (demoPlainJob) PHPClass() string      { return `App\Jobs\PlainJob` }
func (demoNumbersJob) PHPClass() string    { return `App\Jobs\NumbersJob` }
func (demoNamedJob) PHPClass() string      { return `App\Jobs\NamedJob` }
func (demoChainStep) PHPClass() string     { return `App\Jobs\ChainStep` }

// demoPayloads are the recorded payloads the demo queues, in order; the delayed one goes
// to :delayed.
var demoPayloads = []string{"L8-model", "L8-visibility", "L8-plain", "L8-numbers", "L8-string", "L8-chain"}

const demoDelayed = "L8-named"

// demoTally counts what the worker did, for the summary.
type demoTally struct {
	mu       sync.Mutex
	state    map[string]string // job id → "running", "released", "done" or "failed"
	attempts int
	released int
	allDone  chan struct{}
	want     int
}

func (d *demoTally) event(e laraq.Event) {
	if e.Job == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	id := e.Job.ID
	switch e.Kind {
	case laraq.EventProcessing:
		d.attempts++
		d.state[id] = "running"
	case laraq.EventProcessed:
		if d.state[id] != "failed" { // $this->fail() returns normally: JobFailed, then JobProcessed
			d.state[id] = "done"
		}
	case laraq.EventFailed:
		d.state[id] = "failed"
	case laraq.EventReleased:
		d.released++
		d.state[id] = "released"
	}
	if d.allDone != nil && d.count("done")+d.count("failed") == d.want {
		close(d.allDone)
		d.allDone = nil
	}
}

func (d *demoTally) count(state string) int {
	n := 0
	for _, s := range d.state {
		if s == state {
			n++
		}
	}
	return n
}

func runDemo(ctx context.Context, app *cli.App, args []string) int {
	fs := app.NewFlagSet("demo", demoUsage)
	logFormat := fs.String("log-format", string(artisanlog.Artisan), "`format` of the job lines: artisan, artisan8, json or text")
	if rc := fs.Parse(args); rc >= 0 {
		return rc
	}
	if fs.NArg() > 0 {
		return fs.Fail("takes no arguments, got %q", fs.Args())
	}
	errorf := func(format string, args ...any) int {
		fmt.Fprintf(app.Stderr, "%s: %s\n", app.Name, fmt.Sprintf(format, args...))
		return 1
	}
	format, err := artisanlog.ParseFormat(*logFormat)
	if err != nil {
		return errorf("--log-format: %v", err)
	}
	lineHandler, err := artisanlog.NewHandler(app.Stdout, artisanlog.Options{Format: format, Location: time.Local, Color: artisanlog.IsTerminal(app.Stdout)})
	if err != nil {
		return errorf("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, demoTimeout)
	defer cancel()

	mr, err := miniredis.Run()
	if err != nil {
		return errorf("starting the in-memory Redis: %v", err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	dir, err := os.MkdirTemp("", "laraq-demo")
	if err != nil {
		return errorf("%v", err)
	}
	defer os.RemoveAll(dir)
	dsn := "sqlite:" + filepath.Join(dir, "failed.sqlite")
	store, err := database.Open(ctx, dsn, database.Options{CreateTable: database.CreateIfMissing, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return errorf("%v", err)
	}
	defer store.Close()

	conn := &laraq.Connection{Client: client, Prefix: "laravel_database_", Release: laraq.Release{Major: 8, Minor: 83},
		Cache: laraq.CacheStore{Disabled: true}, Failed: store}
	fmt.Fprintf(app.Stdout, "In-memory Redis at %s, prefix %q, failed jobs in %s\n", mr.Addr(), conn.Prefix, dsn)
	fmt.Fprintf(app.Stdout, "Queueing %d jobs recorded from Laravel 8.83, one of them delayed by %s.\n\n", len(demoPayloads)+1, demoDelay)
	p, err := laraq.NewDispatcher(conn)
	if err != nil {
		return errorf("%v", err)
	}
	for _, id := range append(demoPayloads, demoDelayed) {
		raw, err := laravelpayloads.Read(id)
		if err != nil {
			return errorf("payload %s: %v", id, err)
		}
		m := &laraq.Message{Queue: laraq.DefaultQueue, Payload: raw}
		if id == demoDelayed {
			m.Delayed, m.AvailableAt = true, time.Now().Add(demoDelay).Unix()
		}
		if err := p.Enqueue(ctx, m); err != nil {
			return errorf("queueing %s: %v", id, err)
		}
	}

	var printMu sync.Mutex
	say := func(format string, args ...any) {
		printMu.Lock()
		defer printMu.Unlock()
		fmt.Fprintf(app.Stdout, "      ↳ "+format+"\n", args...)
	}
	// The chain's first job queues two more.
	tally := &demoTally{state: map[string]string{}, allDone: make(chan struct{}), want: len(demoPayloads) + 1 + 2}
	allDone := tally.allDone
	lines := artisanlog.NewJobLines(slog.New(lineHandler))
	worker, err := laraq.NewWorker(conn, demoJobs(say), laraq.WorkerConfig{
		Tries:           2,
		Backoff:         []int{demoBackoff},
		Sleep:           50 * time.Millisecond,
		MigrateInterval: 100 * time.Millisecond,
		Logger:          slog.New(slog.DiscardHandler),
		OnEvent:         func(e laraq.Event) { lines.OnEvent(e); tally.event(e) },
	})
	if err != nil {
		return errorf("%v", err)
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	runErr := make(chan error, 1)
	go func() { runErr <- worker.Run(wctx) }()
	select {
	case <-allDone:
	case <-ctx.Done():
	}
	stop()
	if err := <-runErr; err != nil {
		return errorf("worker: %v", err)
	}
	if ctx.Err() != nil {
		return errorf("the jobs did not finish within %s", demoTimeout)
	}

	fmt.Fprintln(app.Stdout, "\nFailed jobs (as 'laraq failed list' shows them):")
	if rc := cli.Main(ctx, []string{"failed", "list", "--database", dsn}, cli.WithIO(app.Stdin, app.Stdout, app.Stderr), cli.WithName(app.Name)); rc != 0 {
		return rc
	}
	all, err := client.Keys(ctx, "*").Result()
	if err != nil {
		return errorf("%v", err)
	}
	// Pushes of chain steps leave short-lived guards (":laraq-push:"), which expire.
	var keys []string
	for _, k := range all {
		if ttl := client.TTL(ctx, k).Val(); strings.Contains(k, ":laraq-") && ttl > 0 {
			continue
		}
		keys = append(keys, k)
	}
	tally.mu.Lock()
	defer tally.mu.Unlock()
	done, failedJobs := tally.count("done"), tally.count("failed")
	fmt.Fprintf(app.Stdout, "\nSummary: %d jobs in %d attempts: %d done, %d failed, %d released for a retry; %d keys left in Redis.\n",
		len(tally.state), tally.attempts, done, failedJobs, tally.released, len(keys))
	if done != tally.want-1 || failedJobs != 1 || tally.released != 1 || len(keys) != 0 {
		return errorf("the demo did not go as expected")
	}
	return 0
}

// demoJobs registers the demo's handlers; say prints what a handler received.
func demoJobs(say func(string, ...any)) *laraq.Jobs {
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[demoModelJob]) error {
		conn := "default"
		if job.Command.User.Connection != nil {
			conn = *job.Command.User.Connection
		}
		say("%s #%v on connection %s, note %q: load it and send the welcome mail", job.Command.User.Class, job.Command.User.ID, conn, job.Command.Note)
		return nil
	})
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[demoVisibilityJob]) error {
		say("public pub=%q, protected prot=%d, private priv=%v", job.Command.Pub, job.Command.Prot, job.Command.Priv)
		return nil
	})
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[demoPlainJob]) error {
		if job.Attempt == 1 {
			say("attempt 1 of %q: the mail server timed out; Laravel's rules release it for %d s", job.Command.Name, demoBackoff)
			return errors.New("mail server timed out")
		}
		say("attempt %d of %q with tags %v: sent", job.Attempt, job.Command.Name, job.Command.Tags)
		return nil
	})
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[demoNumbersJob]) error {
		say("amount %g is out of range: failing it for good ($this->fail())", job.Command.Big)
		return laraq.Fail(fmt.Errorf("amount %g out of range (max %d)", job.Command.Big, job.Command.MaxInt))
	})
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[demoNamedJob]) error {
		say("delayed job %q ran once its %s delay was over", job.Name, demoDelay)
		return nil
	})
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[demoChainStep]) error {
		say("chain step %d; the worker queues the next one, as Laravel's does", job.Command.Step)
		return nil
	})
	laraq.HandleClass(jobs, `App\Jobs\StringJobs@deletes`, func(ctx context.Context, job *laraq.Job[map[string]any]) error {
		say("string job data %v", job.Command)
		return nil
	})
	return jobs
}
