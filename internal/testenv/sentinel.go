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
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sentinels is a Redis master with one replica and three Sentinels (quorum 2) watching
// it, all on loopback and all this test's own: a Laravel Sentinel deployment in small.
type Sentinels struct {
	Master, Replica *Redis
	Addrs           []string // the Sentinels' host:port
	Name            string   // the master set's name
}

// SentinelDownAfter is the Sentinels' down-after-milliseconds: how long the master must
// not answer before they fail over.
const SentinelDownAfter = time.Second

// PrivateSentinels starts a master, a replica of it and three Sentinels monitoring it as
// name, waits until the Sentinels know the replica and each other (a failover needs
// both), and stops them all when the test ends.
func PrivateSentinels(t testing.TB, name string) *Sentinels {
	t.Helper()
	master := PrivateRedis(t)
	replica := PrivateRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	s := &Sentinels{Master: master, Replica: replica, Name: name}
	dir := t.TempDir()
	for i := range 3 {
		addr, err := startSentinel(t, dir, i, name, master.Port)
		if err != nil {
			Need(t, false, "redis sentinel: %v", err)
		}
		s.Addrs = append(s.Addrs, addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, a := range s.Addrs {
		sc := redis.NewSentinelClient(&redis.Options{Addr: a})
		for {
			replicas, _ := sc.Replicas(ctx, name).Result()
			peers, _ := sc.Sentinels(ctx, name).Result()
			if len(replicas) == 1 && len(peers) == 2 {
				break
			}
			if ctx.Err() != nil {
				_ = sc.Close()
				t.Fatalf("sentinel %s did not see the replica and its peers within 30s (replicas %d, sentinels %d)", a, len(replicas), len(peers))
			}
			time.Sleep(100 * time.Millisecond)
		}
		_ = sc.Close()
	}
	return s
}

// startSentinel starts Sentinel i with a config file of its own (Sentinel rewrites it).
func startSentinel(t testing.TB, dir string, i int, name string, masterPort int) (string, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redis-server not in PATH (apt-get install redis-server)")
	}
	port, err := freePort()
	if err != nil {
		return "", err
	}
	conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i))
	text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s %d\nsentinel failover-timeout %s 10000\nsentinel parallel-syncs %s 1\n",
		port, dir, name, masterPort, name, SentinelDownAfter.Milliseconds(), name, name)
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		return "", err
	}
	logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("sentinel-%d.log", i)))
	if err != nil {
		return "", err
	}
	cmd := exec.Command(bin, conf, "--sentinel")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout, cmd.Stderr = logf, logf
	err = cmd.Start()
	_ = logf.Close()
	if err != nil {
		return "", err
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if !waitReady(addr, 5*time.Second, nil) {
		log, _ := os.ReadFile(filepath.Join(dir, fmt.Sprintf("sentinel-%d.log", i)))
		return "", fmt.Errorf("sentinel on %s did not start: %s", addr, log)
	}
	return addr, nil
}

// MasterAddr asks the first Sentinel that answers which server is the master now.
func (s *Sentinels) MasterAddr(ctx context.Context) (string, error) {
	var last error
	for _, a := range s.Addrs {
		sc := redis.NewSentinelClient(&redis.Options{Addr: a, MaxRetries: -1})
		addr, err := sc.GetMasterAddrByName(ctx, s.Name).Result()
		_ = sc.Close()
		if err == nil {
			return net.JoinHostPort(addr[0], addr[1]), nil
		}
		last = err
	}
	return "", last
}

// Failover runs SENTINEL FAILOVER and waits (up to d) until the Sentinels name a master
// other than the one before; it returns the new master's address.
func (s *Sentinels) Failover(t testing.TB, d time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	before, err := s.MasterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addrs[0]})
	defer sc.Close()
	if err := sc.Failover(ctx, s.Name).Err(); err != nil {
		t.Fatalf("SENTINEL FAILOVER: %v", err)
	}
	return s.WaitMasterChange(t, ctx, before)
}

// WaitMasterChange waits until the Sentinels name a master other than before.
func (s *Sentinels) WaitMasterChange(t testing.TB, ctx context.Context, before string) string {
	t.Helper()
	for {
		now, err := s.MasterAddr(ctx)
		if err == nil && now != before {
			return now
		}
		if ctx.Err() != nil {
			t.Fatalf("the master is still %s (%v)", before, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// IsReplica reports whether the server at addr is a replica whose link to its master
// is up.
func IsReplica(ctx context.Context, addr string) bool {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	info, err := c.Info(ctx, "replication").Result()
	return err == nil && strings.Contains(info, "role:slave") && strings.Contains(info, "master_link_status:up")
}
