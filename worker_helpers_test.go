package laraq_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
	"github.com/redis/go-redis/v9"
)

// sendInvoice is a Go picture of a PHP job class.
type sendInvoice struct {
	InvoiceID int64  `php:"invoiceId"`
	Note      string `php:"note,protected"`
}

func (sendInvoice) PHPClass() string { return `App\Jobs\SendInvoice` }

// env is one test's Redis: a client on the shared server and a fresh prefix.
type env struct {
	t      *testing.T
	ctx    context.Context
	client *redis.Client
	prefix string
	rdb    *rdb.RDB
	store  *memStore
	clock  *clock
	logs   *syncBuffer
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := testenv.RedisServer(t)
	client := srv.Client(t, 0)
	prefix := testenv.Prefix(t)
	r, err := rdb.New(client, rdb.Options{Prefix: prefix, Cache: rdb.CacheOptions{Keys: rdb.CacheKeys{RedisPrefix: prefix}}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return &env{t: t, ctx: ctx, client: client, prefix: prefix, rdb: r, store: &memStore{},
		clock: &clock{now: time.Unix(1_700_000_000, 0)}, logs: &syncBuffer{}}
}

// config returns a Config on this env with a fake clock, a memory failed store and a
// captured log.
func (e *env) config(reg *laraq.Jobs) setup {
	return setup{
		Prefix:   e.prefix,
		Registry: reg,
		Failed:   e.store,
		Now:      e.clock.Now,
		Sleep:    20 * time.Millisecond,
		Logger:   slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

func (e *env) consumer(cfg setup) *laraq.Worker {
	e.t.Helper()
	c, err := newWorker(e.client, cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// job builds a Laravel 8 payload for cmd (a struct with PHPClass).
func job(t testing.TB, cmd phpser.Classer, mod func(*payload.ObjectJob)) []byte {
	t.Helper()
	ser, err := phpser.Marshal(cmd)
	if err != nil {
		t.Fatal(err)
	}
	j := payload.ObjectJob{CommandName: cmd.PHPClass(), Command: string(ser)}
	if mod != nil {
		mod(&j)
	}
	b, err := payload.BuildObject(j, payload.Shape{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (e *env) push(queue string, payloads ...[]byte) {
	e.t.Helper()
	for _, p := range payloads {
		if err := e.rdb.Push(e.ctx, queue, p); err != nil {
			e.t.Fatal(err)
		}
	}
}

// run starts c.Run. stop cancels it and returns Run's error (it may be called after done
// is closed, and more than once); done is closed when Run has returned.
func (e *env) run(c *laraq.Worker) (stop func() error, done <-chan struct{}) {
	ctx, cancel := context.WithCancel(e.ctx)
	ch := make(chan struct{})
	var result error
	go func() {
		result = c.Run(ctx)
		close(ch)
	}()
	return func() error {
		cancel()
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
			e.t.Fatal("Run did not return after cancel")
		}
		return result
	}, ch
}

// runToEnd runs c until Run returns by itself (a stop condition) and returns its error.
func (e *env) runToEnd(c *laraq.Worker) error {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	err := c.Run(ctx)
	if ctx.Err() != nil {
		e.t.Fatalf("Run did not stop by itself: %v", err)
	}
	return err
}

// eventually polls cond for up to d.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// keys returns the test's keys without prefix, sorted.
func (e *env) keys() []string {
	e.t.Helper()
	ks, err := testenv.Keys(e.ctx, e.client, e.prefix)
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = strings.TrimPrefix(k, e.prefix)
	}
	sort.Strings(out)
	return out
}

func (e *env) zset(key string) []redis.Z {
	e.t.Helper()
	z, err := e.client.ZRangeWithScores(e.ctx, e.prefix+key, 0, -1).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	return z
}

func (e *env) list(key string) []string {
	e.t.Helper()
	l, err := e.client.LRange(e.ctx, e.prefix+key, 0, -1).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	return l
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// memStore is a failed store in memory.
type memStore struct {
	mu      sync.Mutex
	records []failedRecord
	fail    atomic.Int32 // fail the next n Log calls
}

type failedRecord struct {
	Connection, Queue string
	Payload           []byte
	Exception         string
}

func (s *memStore) Log(ctx context.Context, connection, queue string, payload []byte, exception string) (string, error) {
	if s.fail.Load() > 0 {
		s.fail.Add(-1)
		return "", errors.New("database is down")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, failedRecord{connection, queue, bytes.Clone(payload), exception})
	return "id", nil
}

func (s *memStore) all() []failedRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]failedRecord(nil), s.records...)
}

// events collects consumer events.
type events struct {
	mu  sync.Mutex
	all []laraq.Event
}

func (ev *events) add(e laraq.Event) {
	ev.mu.Lock()
	ev.all = append(ev.all, e)
	ev.mu.Unlock()
}

func (ev *events) kinds() []string {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	var out []string
	for _, e := range ev.all {
		if e.Kind == laraq.EventMigrated || e.Kind == laraq.EventLoop {
			continue
		}
		out = append(out, e.Kind.String())
	}
	return out
}

func (ev *events) count(k laraq.EventKind) int {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	n := 0
	for _, e := range ev.all {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func (ev *events) first(k laraq.EventKind) (laraq.Event, bool) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for _, e := range ev.all {
		if e.Kind == k {
			return e, true
		}
	}
	return laraq.Event{}, false
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var _ io.Writer = (*syncBuffer)(nil)

// quietLogger keeps the worker's log and shows it only when the test fails.
func quietLogger(t testing.TB) *slog.Logger {
	buf := &syncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("worker log:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(buf, nil))
}

func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
}
