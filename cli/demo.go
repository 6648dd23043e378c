package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/laraq/laraq/consumer"
	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/handlers"
	"github.com/laraq/laraq/internal/artisanlog"
	"github.com/laraq/laraq/phpser"
	"github.com/laraq/laraq/producer"
	laravelpayloads "github.com/laraq/laraq/testdata/laravel-payloads"
	"github.com/redis/go-redis/v9"
)

func init() {
	register(&Command{Name: "demo", Summary: "run Laravel jobs through Go handlers on an in-memory Redis (needs nothing else)", Run: runDemo})
}

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

func (d *demoTally) event(e consumer.Event) {
	if e.Job == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	id := e.Job.ID
	switch e.Kind {
	case consumer.EventProcessing:
		d.attempts++
		d.state[id] = "running"
	case consumer.EventProcessed:
		if d.state[id] != "failed" { // $this->fail() returns normally: JobFailed, then JobProcessed
			d.state[id] = "done"
		}
	case consumer.EventFailed:
		d.state[id] = "failed"
	case consumer.EventReleased:
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

func runDemo(ctx context.Context, app *App, args []string) int {
	fs := app.newFlagSet("demo", demoUsage)
	logFormat := fs.String("log-format", string(artisanlog.Artisan), "`format` of the job lines: artisan, artisan8, json or text")
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	w := &workFlags{logFormat: *logFormat, logLevel: "info"}
	out, err := w.outputs(app, time.Local)
	if err != nil {
		return app.errorf("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, demoTimeout)
	defer cancel()

	mr, err := miniredis.Run()
	if err != nil {
		return app.errorf("starting the in-memory Redis: %v", err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	dir, err := os.MkdirTemp("", "laraq-demo")
	if err != nil {
		return app.errorf("%v", err)
	}
	defer os.RemoveAll(dir)
	dsn := "sqlite:" + filepath.Join(dir, "failed.sqlite")
	store, err := failed.Open(ctx, dsn, failed.Options{Logger: out.log})
	if err != nil {
		return app.errorf("%v", err)
	}
	defer store.Close()

	const prefix = "laravel_database_"
	fmt.Fprintf(app.Stdout, "In-memory Redis at %s, prefix %q, failed jobs in %s\n", mr.Addr(), prefix, dsn)
	fmt.Fprintf(app.Stdout, "Queueing %d jobs recorded from Laravel 8.83, one of them delayed by %s.\n\n", len(demoPayloads)+1, demoDelay)
	p, err := producer.New(client, producer.Config{Prefix: prefix})
	if err != nil {
		return app.errorf("%v", err)
	}
	for _, id := range append(demoPayloads, demoDelayed) {
		raw, err := laravelpayloads.Read(id)
		if err != nil {
			return app.errorf("payload %s: %v", id, err)
		}
		m := &producer.Message{Queue: consumer.DefaultQueue, Payload: raw}
		if id == demoDelayed {
			m.Delayed, m.AvailableAt = true, time.Now().Add(demoDelay).Unix()
		}
		if err := p.Enqueue(ctx, m); err != nil {
			return app.errorf("queueing %s: %v", id, err)
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
	lines := newJobLines(out.jobs)
	cfg := consumer.Config{
		Prefix:          prefix,
		Registry:        demoRegistry(say),
		Tries:           new(2),
		Backoff:         []int{demoBackoff},
		Sleep:           50 * time.Millisecond,
		MigrateInterval: 100 * time.Millisecond,
		Cache:           consumer.CacheConfig{Disabled: true},
		Failed:          store,
		Logger:          slog.New(discardHandler{}),
		OnEvent:         func(e consumer.Event) { lines.event(e); tally.event(e) },
	}
	worker, err := consumer.New(client, cfg)
	if err != nil {
		return app.errorf("%v", err)
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
		return app.errorf("worker: %v", err)
	}
	if ctx.Err() != nil {
		return app.errorf("the jobs did not finish within %s", demoTimeout)
	}

	fmt.Fprintln(app.Stdout, "\nFailed jobs (as 'laraq failed list' shows them):")
	if rc := (&failedCmd{app: app, store: store}).list(ctx); rc != 0 {
		return rc
	}
	keys, err := client.Keys(ctx, "*").Result()
	if err != nil {
		return app.errorf("%v", err)
	}
	tally.mu.Lock()
	defer tally.mu.Unlock()
	done, failedJobs := tally.count("done"), tally.count("failed")
	fmt.Fprintf(app.Stdout, "\nSummary: %d jobs in %d attempts: %d done, %d failed, %d released for a retry; %d keys left in Redis.\n",
		len(tally.state), tally.attempts, done, failedJobs, tally.released, len(keys))
	if done != tally.want-1 || failedJobs != 1 || tally.released != 1 || len(keys) != 0 {
		return app.errorf("the demo did not go as expected")
	}
	return 0
}

// demoRegistry registers the demo's handlers; say prints what a handler received.
func demoRegistry(say func(string, ...any)) *handlers.Registry {
	reg := handlers.NewRegistry()
	handlers.Register(reg, `App\Jobs\ModelJob`, func(ctx context.Context, cmd *demoModelJob, job *handlers.Job) error {
		conn := "default"
		if cmd.User.Connection != nil {
			conn = *cmd.User.Connection
		}
		say("%s #%v on connection %s, note %q: load it and send the welcome mail", cmd.User.Class, cmd.User.ID, conn, cmd.Note)
		return nil
	})
	handlers.Register(reg, `App\Jobs\VisibilityJob`, func(ctx context.Context, cmd *demoVisibilityJob, job *handlers.Job) error {
		say("public pub=%q, protected prot=%d, private priv=%v", cmd.Pub, cmd.Prot, cmd.Priv)
		return nil
	})
	handlers.Register(reg, `App\Jobs\PlainJob`, func(ctx context.Context, cmd *demoPlainJob, job *handlers.Job) error {
		if job.Attempt == 1 {
			say("attempt 1 of %q: the mail server timed out; Laravel's rules release it for %d s", cmd.Name, demoBackoff)
			return errors.New("mail server timed out")
		}
		say("attempt %d of %q with tags %v: sent", job.Attempt, cmd.Name, cmd.Tags)
		return nil
	})
	handlers.Register(reg, `App\Jobs\NumbersJob`, func(ctx context.Context, cmd *demoNumbersJob, job *handlers.Job) error {
		say("amount %g is out of range: failing it for good ($this->fail())", cmd.Big)
		return handlers.Fail(fmt.Errorf("amount %g out of range (max %d)", cmd.Big, cmd.MaxInt))
	})
	handlers.Register(reg, `App\Jobs\NamedJob`, func(ctx context.Context, cmd *demoNamedJob, job *handlers.Job) error {
		say("delayed job %q ran once its %s delay was over", job.Name, demoDelay)
		return nil
	})
	handlers.Register(reg, `App\Jobs\ChainStep`, func(ctx context.Context, cmd *demoChainStep, job *handlers.Job) error {
		say("chain step %d; the worker queues the next one, as Laravel's does", cmd.Step)
		return nil
	})
	handlers.Register(reg, `App\Jobs\StringJobs@deletes`, func(ctx context.Context, data *map[string]any, job *handlers.Job) error {
		say("string job data %v", *data)
		return nil
	})
	return reg
}

// discardHandler drops the worker's own log: the demo shows the job lines.
type discardHandler struct{}

func (discardHandler) Enabled(context.Context, slog.Level) bool  { return false }
func (discardHandler) Handle(context.Context, slog.Record) error { return nil }
func (d discardHandler) WithAttrs([]slog.Attr) slog.Handler      { return d }
func (d discardHandler) WithGroup(string) slog.Handler           { return d }
