package testkit

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

// SendInvoice is a Go picture of a PHP job class.
type SendInvoice struct {
	InvoiceID int64  `php:"invoiceId"`
	Note      string `php:"note,protected"`
}

func (SendInvoice) PHPClass() string { return `App\Jobs\SendInvoice` }

// Env is one test's Redis: a client on the shared server and a fresh prefix.
type Env struct {
	T      *testing.T
	Ctx    context.Context
	Client *redis.Client
	Prefix string
	RDB    *rdb.RDB
	Store  *MemStore
	Clock  *Clock
	Logs   *SyncBuffer
}

// NewEnv gives the test a client on its binary's redis-server, a fresh prefix, a memory
// failed store, a settable clock and a captured log.
func NewEnv(t *testing.T) *Env {
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
	return &Env{T: t, Ctx: ctx, Client: client, Prefix: prefix, RDB: r, Store: &MemStore{},
		Clock: &Clock{now: time.Unix(1_700_000_000, 0)}, Logs: &SyncBuffer{}}
}

// Config returns a Config on this env with a fake clock, a memory failed store and a
// captured log.
func (e *Env) Config(reg *laraq.Jobs) Setup {
	return Setup{
		Prefix:   e.Prefix,
		Registry: reg,
		Failed:   e.Store,
		Now:      e.Clock.Now,
		Sleep:    20 * time.Millisecond,
		Logger:   slog.New(slog.NewTextHandler(e.Logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
}

// Consumer is the worker cfg describes, on this env's client; an error fails the test.
func (e *Env) Consumer(cfg Setup) *laraq.Worker {
	e.T.Helper()
	c, err := NewWorker(e.Client, cfg)
	if err != nil {
		e.T.Fatal(err)
	}
	return c
}

// Job builds a Laravel 8 payload for cmd (a struct with PHPClass).
func Job(t testing.TB, cmd phpser.Classer, mod func(*payload.ObjectJob)) []byte {
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

// Push queues payloads on queue as Laravel's RedisQueue::pushRaw does.
func (e *Env) Push(queue string, payloads ...[]byte) {
	e.T.Helper()
	for _, p := range payloads {
		if err := e.RDB.Push(e.Ctx, queue, p); err != nil {
			e.T.Fatal(err)
		}
	}
}

// Run starts c.Run. stop cancels it and returns Run's error (it may be called after done
// is closed, and more than once); done is closed when Run has returned.
func (e *Env) Run(c *laraq.Worker) (stop func() error, done <-chan struct{}) {
	ctx, cancel := context.WithCancel(e.Ctx)
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
			e.T.Fatal("Run did not return after cancel")
		}
		return result
	}, ch
}

// RunToEnd runs c until Run returns by itself (a stop condition) and returns its error.
func (e *Env) RunToEnd(c *laraq.Worker) error {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(e.Ctx, 30*time.Second)
	defer cancel()
	err := c.Run(ctx)
	if ctx.Err() != nil {
		e.T.Fatalf("Run did not stop by itself: %v", err)
	}
	return err
}

// Eventually polls cond for up to d.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Keys returns the test's keys without prefix, sorted.
func (e *Env) Keys() []string {
	e.T.Helper()
	ks, err := testenv.Keys(e.Ctx, e.Client, e.Prefix)
	if err != nil {
		e.T.Fatal(err)
	}
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = strings.TrimPrefix(k, e.Prefix)
	}
	sort.Strings(out)
	return out
}

// ZSet is the sorted set at key (without prefix), with scores.
func (e *Env) ZSet(key string) []redis.Z {
	e.T.Helper()
	z, err := e.Client.ZRangeWithScores(e.Ctx, e.Prefix+key, 0, -1).Result()
	if err != nil {
		e.T.Fatal(err)
	}
	return z
}

// List is the list at key (without prefix).
func (e *Env) List(key string) []string {
	e.T.Helper()
	l, err := e.Client.LRange(e.Ctx, e.Prefix+key, 0, -1).Result()
	if err != nil {
		e.T.Fatal(err)
	}
	return l
}

// Clock is a settable clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock on by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// MemStore is a failed store in memory.
type MemStore struct {
	mu      sync.Mutex
	records []failedRecord
	Fail    atomic.Int32 // fail the next n Log calls
}

type failedRecord struct {
	Connection, Queue string
	Payload           []byte
	Exception         string
}

// Log keeps a failed job, or errs while Fail is above zero (a database that is down).
func (s *MemStore) Log(ctx context.Context, connection, queue string, payload []byte, exception string) (string, error) {
	if s.Fail.Load() > 0 {
		s.Fail.Add(-1)
		return "", errors.New("database is down")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, failedRecord{connection, queue, bytes.Clone(payload), exception})
	return "id", nil
}

// All is every failed job kept, oldest first.
func (s *MemStore) All() []failedRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]failedRecord(nil), s.records...)
}

// SyncBuffer is a goroutine-safe log sink.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var _ io.Writer = (*SyncBuffer)(nil)

// QuietLogger keeps the worker's log and shows it only when the test fails.
func QuietLogger(t testing.TB) *slog.Logger {
	buf := &SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("worker log:\n%s", buf.String())
		}
	})
	return slog.New(slog.NewTextHandler(buf, nil))
}

// SlogTo is a text logger writing to w.
func SlogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, nil))
}

// PushChain queues ChainStep 1 with the given followers, as Bus::chain() would.
func (e *Env) PushChain(next ...any) {
	e.T.Helper()
	p, err := NewDispatcher(e.Client, DispatchSetup{Prefix: e.Prefix, Now: e.Clock.Now})
	if err != nil {
		e.T.Fatal(err)
	}
	if _, err := p.Dispatch(e.Ctx, WChainStep{Step: 1}, laraq.Chain(next...)); err != nil {
		e.T.Fatal(err)
	}
}
