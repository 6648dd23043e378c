package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	mw "github.com/laraq/laraq/middleware"
	"github.com/laraq/laraq/phpser"
)

// The worker's side of the middleware: the chain's order, what a panicking handler
// means to the middleware, the payload's ->through() objects, the events naming who
// decided. One real redis-server; a fresh prefix per test.

// syncOrder is a job type whose class declares middleware(), computed from its fields.
type syncOrder struct {
	OrderID int    `php:"orderId"`
	Mode    string `php:"mode"`
	laraq.Queueable
}

func (syncOrder) PHPClass() string { return `App\Jobs\SyncOrder` }

// guards is set per test: what the type's Middleware() returns for a command.
var guards func(syncOrder) []laraq.Middleware

func (j syncOrder) Middleware() []laraq.Middleware {
	if guards == nil {
		return nil
	}
	return guards(j)
}

// rig is one test's connection, dispatcher, events.
type rig struct {
	t      *testing.T
	client *redis.Client
	conn   *laraq.Connection
	disp   *laraq.Dispatcher
	mu     sync.Mutex
	events []laraq.Event
}

func newRig(t *testing.T) *rig {
	t.Helper()
	srv := testenv.RedisServer(t)
	c := srv.Client(t, 0)
	conn := &laraq.Connection{Client: c, Prefix: testenv.Prefix(t), Release: laraq.Release{Major: 12, Minor: 67},
		Cache: laraq.CacheStore{Client: srv.Client(t, 1), Prefix: "laravel-cache-"}}
	d, err := laraq.NewDispatcher(conn)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, client: c, conn: conn, disp: d}
}

func (f *rig) dispatch(cmd any) {
	f.t.Helper()
	if _, err := f.disp.Dispatch(context.Background(), cmd); err != nil {
		f.t.Fatal(err)
	}
}

// work runs a worker until the queue is empty and returns its events.
func (f *rig) work(jobs *laraq.Jobs, cfg laraq.WorkerConfig) []laraq.Event {
	f.t.Helper()
	cfg.StopWhenEmpty = true
	cfg.Sleep = -1
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg.OnEvent = func(e laraq.Event) {
		f.mu.Lock()
		f.events = append(f.events, e)
		f.mu.Unlock()
	}
	w, err := laraq.NewWorker(f.conn, jobs, cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := w.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
		f.t.Fatalf("Run: %v", err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.events
	f.events = nil
	return out
}

// decided lists the events naming a middleware: "kind by middleware decision".
func decided(events []laraq.Event) []string {
	var out []string
	for _, e := range events {
		if e.Middleware != "" {
			out = append(out, fmt.Sprintf("%s by %s %s", e.Kind, e.Middleware, e.Decision))
		}
	}
	return out
}

// trace is a middleware that records its name around the rest.
func trace(trail *[]string, name string) laraq.Middleware {
	return laraq.MiddlewareFunc(func(ctx context.Context, job *laraq.JobInfo, next laraq.Next) error {
		*trail = append(*trail, name)
		return next(ctx)
	})
}

// TestWorkerChainOrder: the worker's middleware, the registration's, the class's by
// name, the type's Middleware(), then ->through()'s, then the handler, as
// CallQueuedHandler::dispatchThroughMiddleware orders the class's and the payload's.
func TestWorkerChainOrder(t *testing.T) {
	f := newRig(t)
	var trail []string
	guards = func(j syncOrder) []laraq.Middleware {
		return []laraq.Middleware{trace(&trail, fmt.Sprintf("type:%d", j.OrderID))}
	}
	t.Cleanup(func() { guards = nil })
	const traceClass = `App\Queue\Middleware\Trace`
	decoders := mw.LaravelDecoders()
	decoders[traceClass] = func(obj *phpser.Value) (laraq.Middleware, error) {
		name, _ := obj.Prop("name")
		return trace(&trail, "through:"+name.Str()), nil
	}
	cmd := syncOrder{OrderID: 7}
	cmd.Queueable.Middleware = []any{phpser.NewObject(traceClass, phpser.PublicProp("name", phpser.String("a")))}
	f.dispatch(cmd)

	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[syncOrder]) error {
		trail = append(trail, "handler")
		return nil
	}, laraq.WithMiddleware(trace(&trail, "registration")))
	events := f.work(jobs, laraq.WorkerConfig{
		Middleware:      []laraq.Middleware{trace(&trail, "worker")},
		ClassMiddleware: map[string][]laraq.Middleware{`App\Jobs\SyncOrder`: {trace(&trail, "class")}},
		ThroughDecoders: decoders,
	})
	if got, want := strings.Join(trail, " "), "worker registration class type:7 through:a handler"; got != want {
		t.Errorf("order %q, want %q", got, want)
	}
	if len(decided(events)) != 0 {
		t.Errorf("no middleware decided, yet %q", decided(events))
	}
}

// TestWorkerPanicIsAnException: a handler's panic reaches ThrottlesExceptions and
// FailOnException as an exception, as a Throwable reaches PHP's.
func TestWorkerPanicIsAnException(t *testing.T) {
	for _, tc := range []struct {
		name  string
		guard laraq.Middleware
		want  []string
	}{
		{"ThrottlesExceptions", mw.ThrottlesExceptions(3, time.Minute).Backoff(2 * time.Minute),
			[]string{"released by ThrottlesExceptions released", "processed by ThrottlesExceptions released"}},
		{"FailOnException", mw.FailOnException(func(err error) bool { return strings.Contains(err.Error(), "panic: kaput") }),
			[]string{"failed by FailOnException failed", "exception by FailOnException failed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRig(t)
			guards = func(syncOrder) []laraq.Middleware { return []laraq.Middleware{tc.guard} }
			t.Cleanup(func() { guards = nil })
			f.dispatch(syncOrder{OrderID: 1})
			jobs := laraq.NewJobs()
			laraq.Handle(jobs, func(context.Context, *laraq.Job[syncOrder]) error { panic("kaput") })
			events := f.work(jobs, laraq.WorkerConfig{Tries: 5})
			if got := decided(events); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("events %q, want %q", got, tc.want)
			}
			for _, e := range events {
				if e.Kind == laraq.EventReleased && e.Delay != 2*time.Minute {
					t.Errorf("released for %s, want the backoff", e.Delay)
				}
			}
		})
	}
}

// TestWorkerThroughUnknownFails: a ->through() object this worker has no Go form for
// fails the job, naming the class, instead of running it unguarded.
func TestWorkerThroughUnknownFails(t *testing.T) {
	f := newRig(t)
	cmd := syncOrder{OrderID: 3}
	cmd.Queueable.Middleware = []any{phpser.NewObject(`App\Queue\Middleware\EnsureTenant`)}
	f.dispatch(cmd)
	ran := false
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(context.Context, *laraq.Job[syncOrder]) error { ran = true; return nil })
	events := f.work(jobs, laraq.WorkerConfig{})
	var failedWith error
	for _, e := range events {
		if e.Kind == laraq.EventFailed {
			failedWith = e.Err
		}
	}
	if ran || failedWith == nil || !strings.Contains(failedWith.Error(), `App\Queue\Middleware\EnsureTenant`) {
		t.Errorf("ran %v, failed with %v", ran, failedWith)
	}
}

// teamGuard is an application's own middleware deciding with a bare ReleaseAfter.
type teamGuard struct{}

func (teamGuard) Handle(context.Context, *laraq.JobInfo, laraq.Next) error {
	return laraq.ReleaseAfter(9 * time.Second)
}

// TestWorkerEventsNameTheMiddleware: every decision's events say which middleware took
// it — Laravel's by their class name, an application's by its type.
func TestWorkerEventsNameTheMiddleware(t *testing.T) {
	for _, tc := range []struct {
		name  string
		guard laraq.Middleware
		want  []string
	}{
		{"skip", mw.SkipWhen(true), []string{"processed by Skip skipped"}},
		{"release", mw.ReleaseWhen(true, 15*time.Second), []string{"released by Release released", "processed by Release released"}},
		{"an application's", teamGuard{}, []string{"released by middleware_test.teamGuard released", "processed by middleware_test.teamGuard released"}},
		{"a handler's own release", laraq.MiddlewareFunc(func(ctx context.Context, _ *laraq.JobInfo, next laraq.Next) error {
			_ = next(ctx)
			return laraq.ReleaseAfter(time.Second) // not the rest's: its own
		}), []string{"released by MiddlewareFunc released", "processed by MiddlewareFunc released"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newRig(t)
			f.dispatch(syncOrder{OrderID: 1})
			ran := false
			jobs := laraq.NewJobs()
			laraq.Handle(jobs, func(context.Context, *laraq.Job[syncOrder]) error { ran = true; return nil },
				laraq.WithMiddleware(tc.guard))
			events := f.work(jobs, laraq.WorkerConfig{})
			if got := decided(events); fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("events %q, want %q", got, tc.want)
			}
			if ran != (tc.name == "a handler's own release") {
				t.Errorf("handler ran: %v", ran)
			}
		})
	}
}

// TestWorkerClassSpecGuardsAnUntypedClass: middleware given to a class by a spec guard
// its jobs on a fallback handler (as `laraq work --forward` registers), with the key
// read from the command's property as PHP's middleware() reads $this->orderId; a
// command without that property is an error naming it, not an unguarded run.
func TestWorkerClassSpecGuardsAnUntypedClass(t *testing.T) {
	f := newRig(t)
	specs := mw.NewSpecs()
	if err := specs.AddMiddleware(`App\Jobs\SyncOrder=without-overlapping:orderId,release-after=10,expire-after=60`); err != nil {
		t.Fatal(err)
	}
	lock := f.conn.Prefix + "laravel-cache-laravel-queue-overlap:App\\Jobs\\SyncOrder:7"
	if err := f.client.Set(context.Background(), lock, "php-worker-owner", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	f.dispatch(syncOrder{OrderID: 7})
	f.dispatch(syncOrder{OrderID: 8})
	var ran []string
	jobs := laraq.NewJobs()
	jobs.Fallback(func(ctx context.Context, job *laraq.JobInfo) error {
		id, err := mw.Property(job, "orderId")
		ran = append(ran, id)
		return err
	})
	events := f.work(jobs, laraq.WorkerConfig{ClassMiddleware: specs.Classes})
	if fmt.Sprint(ran) != "[8]" {
		t.Errorf("ran %v, want only order 8", ran)
	}
	if got, want := decided(events), []string{"released by WithoutOverlapping released", "processed by WithoutOverlapping released"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %q, want %q", got, want)
	}
	for _, e := range events {
		if e.Kind == laraq.EventReleased && (e.Delay != 10*time.Second || e.Job.Attempt != 1) {
			t.Errorf("released for %s after attempt %d", e.Delay, e.Job.Attempt)
		}
	}
	if owner, _ := f.client.Get(context.Background(), lock).Result(); owner != "php-worker-owner" {
		t.Errorf("the other worker's lock is now %q", owner)
	}

	specs = mw.NewSpecs()
	if err := specs.AddMiddleware(`App\Jobs\SyncOrder=without-overlapping:shopId`); err != nil {
		t.Fatal(err)
	}
	f.dispatch(syncOrder{OrderID: 9})
	ran = nil
	events = f.work(jobs, laraq.WorkerConfig{ClassMiddleware: specs.Classes})
	var exception error
	for _, e := range events {
		if e.Kind == laraq.EventException {
			exception = e.Err
		}
	}
	if len(ran) != 0 || exception == nil || !strings.Contains(exception.Error(), `App\Jobs\SyncOrder has no property shopId`) {
		t.Errorf("ran %v, exception %v", ran, exception)
	}
}
