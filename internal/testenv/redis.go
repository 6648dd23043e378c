package testenv

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a redis-server process owned by the test binary.
type Redis struct {
	Addr string
	Port int
	// TLSAddr and TLSPort are the TLS listener of a server started with TLS
	// (PrivateTLSRedis); empty otherwise.
	TLSAddr string
	TLSPort int
	cmd     *exec.Cmd
	dir     string
}

var (
	sharedMu  sync.Mutex
	shared    *Redis
	sharedErr error

	// running holds every server StartRedis started and Stop has not stopped yet, so
	// that Main stops (and removes the directory of) one a test forgot.
	runningMu sync.Mutex
	running   = map[*Redis]bool{}
)

// RedisServer returns the redis-server shared by all tests of this binary, starting it on
// first use. Main stops it and removes its directory; when the test process dies first,
// the server dies with it and a later binary removes the directory (see scratchDir).
func RedisServer(t testing.TB) *Redis {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = StartRedis()
	}
	if sharedErr != nil {
		Need(t, false, "redis-server: %v", sharedErr)
	}
	return shared
}

// StartRedis starts a private redis-server on a free loopback port (no persistence),
// working in a fresh laraq-redis-PID-* directory of the temporary directory. The caller
// must Stop it (Main stops what is left). Most tests want RedisServer instead.
func StartRedis() (*Redis, error) { return StartRedisWith(nil) }

// StartRedisWith is StartRedis with extra redis-server arguments (--requirepass PW,
// --maxmemory 2mb, ...). An argument "TLSPORT" is replaced by a second free port, which
// becomes the server's TLSPort.
func StartRedisWith(extra []string) (*Redis, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("redis-server not in PATH (apt-get install redis-server)")
	}
	dir, err := scratchDir(os.TempDir(), "redis")
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "redis.log")
	fail := func(err error) (*Redis, error) {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return fail(err)
		}
		args := []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
			"--dir", dir, "--databases", "16", "--protected-mode", "yes", "--loglevel", "warning"}
		tlsPort := 0
		for _, a := range extra {
			if a == "TLSPORT" {
				if tlsPort, err = freePort(); err != nil {
					return fail(err)
				}
				a = strconv.Itoa(tlsPort)
			}
			args = append(args, a)
		}
		cmd := exec.Command(bin, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return fail(err)
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		err = cmd.Start()
		_ = logf.Close() // the server has its own copy
		if err != nil {
			return fail(err)
		}
		r := &Redis{Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port, cmd: cmd, dir: dir}
		if tlsPort != 0 {
			r.TLSAddr, r.TLSPort = fmt.Sprintf("127.0.0.1:%d", tlsPort), tlsPort
		}
		if waitReady(r.Addr, 5*time.Second, extra) {
			runningMu.Lock()
			running[r] = true
			runningMu.Unlock()
			return r, nil
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	log, _ := os.ReadFile(logPath)
	return fail(fmt.Errorf("redis-server did not start: %s", log))
}

// Stop kills the server and removes its directory. Later calls do nothing.
func (r *Redis) Stop() {
	if r == nil {
		return
	}
	runningMu.Lock()
	defer runningMu.Unlock()
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Kill()
	_ = r.cmd.Wait()
	_ = os.RemoveAll(r.dir)
	r.cmd = nil
	delete(running, r)
}

// Client returns a go-redis client on database db, closed when the test ends.
func (r *Redis) Client(t testing.TB, db int) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: r.Addr, DB: db, PoolSize: 128})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Keys returns every key matching prefix+"*" on the client's database, sorted by SCAN order.
func Keys(ctx context.Context, c redis.UniversalClient, prefix string) ([]string, error) {
	var out []string
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		out = append(out, iter.Val())
	}
	return out, iter.Err()
}

// AppKeys is Keys without laraq's own short-lived bookkeeping: the pop tickets and push
// guards (":laraq-" after the queue key) that expire by themselves. Such a key without
// a TTL is kept in the result, so a leak still shows. For tests comparing what laraq
// and PHP leave in Redis.
func AppKeys(ctx context.Context, c redis.UniversalClient, prefix string) ([]string, error) {
	keys, err := Keys(ctx, c, prefix)
	if err != nil {
		return nil, err
	}
	out := keys[:0]
	for _, k := range keys {
		if strings.Contains(k, ":laraq-") {
			if ttl, err := c.TTL(ctx, k).Result(); err == nil && ttl > 0 {
				continue
			}
		}
		out = append(out, k)
	}
	return out, nil
}

// Main runs the tests, then stops every server this package started and removes their
// directories, and those that binaries which died without this clean-up (fuzz workers
// killed by their coordinator, say) left behind. Use it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	stopAll()
	os.Exit(code)
}

// stopAll stops the shared and any forgotten redis-servers and the database servers, and
// sweeps stale directories.
func stopAll() {
	sharedMu.Lock()
	shared.Stop()
	sharedMu.Unlock()
	runningMu.Lock()
	left := make([]*Redis, 0, len(running))
	for r := range running {
		left = append(left, r)
	}
	runningMu.Unlock()
	for _, r := range left {
		r.Stop()
	}
	StopDatabases()
	sweepAll()
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitReady(addr string, d time.Duration, args []string) bool {
	deadline := time.Now().Add(d)
	o := &redis.Options{Addr: addr, MaxRetries: -1}
	for i, a := range args {
		if a == "--requirepass" && i+1 < len(args) {
			o.Password = args[i+1]
		}
	}
	c := redis.NewClient(o)
	defer c.Close()
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// PrivateRedis starts a redis-server for this test alone (StartRedisWith extra), stopped
// when the test ends: for tests that stall, restart or kill their server, or that need a
// password or a memory limit of their own.
func PrivateRedis(t testing.TB, extra ...string) *Redis {
	t.Helper()
	r, err := StartRedisWith(extra)
	if err != nil {
		Need(t, false, "redis-server: %v", err)
	}
	t.Cleanup(r.Stop)
	return r
}

// Stall stops the server process (SIGSTOP) and resumes it (SIGCONT) after d, without
// waiting: a Redis that stops answering with every connection open, as under a long
// fork, swap storm or VM pause. Commands sent meanwhile wait in the kernel's buffers
// and run when the server resumes, even those whose client gave up and closed.
func (r *Redis) Stall(t testing.TB, d time.Duration) {
	t.Helper()
	if err := r.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("stall redis-server: %v", err)
	}
	resume := func() { _ = r.cmd.Process.Signal(syscall.SIGCONT) }
	timer := time.AfterFunc(d, resume)
	t.Cleanup(func() {
		if timer.Stop() {
			resume()
		}
	})
}
