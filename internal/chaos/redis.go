package chaos

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a redis-server owned by one scenario, with the append-only file on, so that
// it can be shut down or killed with -9 and started again on the same port and
// directory with every acknowledged write still there.
//
// appendfsync is "always": Redis then writes (and syncs) the AOF before it sends the
// replies of the commands in it, so a kill -9 loses no acknowledged write. With
// "everysec" it may postpone the write by up to two seconds while a background fsync
// runs and reply meanwhile, and a kill then loses writes the workers saw succeed: a
// property of that setting, not of the workers. The directory is on a memory file
// system when there is one, where the syncs cost nothing.
type Redis struct {
	Port int
	Dir  string
	// Args are more redis-server arguments, such as --replicaof for a replica.
	Args []string

	mu      sync.Mutex
	proc    *Proc
	stopped bool // SIGSTOPped
	starts  int
}

// StartRedis starts a redis-server with AOF in dir on a free loopback port.
func StartRedis(dir string, args ...string) (*Redis, error) {
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		r := &Redis{Port: port, Dir: dir, Args: args}
		if err := r.Start(); err == nil {
			return r, nil
		} else if attempt == 4 {
			return nil, err
		}
	}
	return nil, fmt.Errorf("chaos: redis-server did not start")
}

// Addr is host:port.
func (r *Redis) Addr() string { return "127.0.0.1:" + strconv.Itoa(r.Port) }

// URL is the redis:// URL of database db.
func (r *Redis) URL(db int) string { return fmt.Sprintf("redis://%s/%d", r.Addr(), db) }

// Start starts the server (again) on its port and directory; the AOF is replayed.
func (r *Redis) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc != nil && r.proc.Running() {
		return fmt.Errorf("chaos: redis-server on %d is already running", r.Port)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("chaos: redis-server not in PATH (apt-get install redis-server)")
	}
	r.starts++
	args := append([]string{"--port", strconv.Itoa(r.Port), "--bind", "127.0.0.1", "--dir", r.Dir,
		"--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--protected-mode", "yes", "--loglevel", "warning", "--databases", "4"}, r.Args...)
	cmd := exec.Command(bin, args...)
	p, err := StartProc(r.Dir, "redis-"+strconv.Itoa(r.starts), cmd)
	if err != nil {
		return err
	}
	r.proc, r.stopped = p, false
	// The port may be taken after a restart, or the AOF take a while to load.
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if !p.Running() {
			return fmt.Errorf("chaos: redis-server exited at start:\n%s", p.Output(2000))
		}
		if ping(r.Addr()) {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Kill9()
	return fmt.Errorf("chaos: redis-server on %d did not answer:\n%s", r.Port, p.Output(2000))
}

// Stall freezes the server (SIGSTOP): connections stay open and nothing is answered,
// like a Redis host that stopped scheduling it.
func (r *Redis) Stall() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil || !r.proc.Running() {
		return fmt.Errorf("chaos: stall: redis-server is not running")
	}
	r.stopped = true
	return r.proc.Signal(syscall.SIGSTOP)
}

// Resume ends a stall (SIGCONT).
func (r *Redis) Resume() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil {
		return nil
	}
	r.stopped = false
	return r.proc.Signal(syscall.SIGCONT)
}

// Shutdown stops the server with SHUTDOWN (the AOF is synced; no RDB is saved) and
// waits for it to exit.
func (r *Redis) Shutdown(ctx context.Context) error {
	c := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	defer c.Close()
	// The server closes the connection instead of answering: an error is expected.
	_ = c.Do(ctx, "SHUTDOWN", "NOSAVE").Err()
	r.mu.Lock()
	p := r.proc
	r.mu.Unlock()
	select {
	case <-p.Done():
		return nil
	case <-ctx.Done():
		p.Kill9()
		return fmt.Errorf("chaos: redis-server did not shut down: %w", ctx.Err())
	}
}

// Kill kills the server with -9.
func (r *Redis) Kill() {
	r.mu.Lock()
	p := r.proc
	stopped := r.stopped
	r.mu.Unlock()
	if p == nil {
		return
	}
	if stopped {
		_ = p.Signal(syscall.SIGCONT)
	}
	p.Kill9()
}

// Close kills the server; its directory is the caller's.
func (r *Redis) Close() { r.Kill() }

// Client returns a go-redis client on database db (caller closes it). It does not
// retry on its own, so the harness sees an outage as it is.
func (r *Redis) Client(db int) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: r.Addr(), DB: db, MaxRetries: -1, PoolSize: 8,
		DialTimeout: time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second})
}

func ping(addr string) bool {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	return c.Ping(ctx).Err() == nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
