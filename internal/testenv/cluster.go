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

// RedisCluster starts a Redis Cluster of three masters (no replicas) on loopback for one
// test and returns their "127.0.0.1:PORT" addresses; the nodes stop when the test ends.
// redis-server and redis-cli are needed: a failure in CI, a skip elsewhere.
func RedisCluster(t testing.TB) []string {
	t.Helper()
	server, err1 := exec.LookPath("redis-server")
	cli, err2 := exec.LookPath("redis-cli")
	Need(t, err1 == nil && err2 == nil, "redis-server and redis-cli for a Redis Cluster")
	dir := t.TempDir()
	var addrs []string
	for i := 0; i < 3; i++ {
		port := clusterNodePort(t)
		nodeDir := filepath.Join(dir, strconv.Itoa(port))
		if err := os.Mkdir(nodeDir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(server, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(nodeDir, "nodes.conf"), "--dir", nodeDir,
			"--save", "", "--appendonly", "no", "--loglevel", "warning")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		addr := "127.0.0.1:" + strconv.Itoa(port)
		if !waitReady(addr, 5*time.Second, nil) {
			t.Fatalf("cluster node %s did not start", addr)
		}
		addrs = append(addrs, addr)
	}
	args := append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	deadline := time.Now().Add(20 * time.Second)
	for _, a := range addrs {
		c := redis.NewClient(&redis.Options{Addr: a})
		for {
			info, _ := c.ClusterInfo(context.Background()).Result()
			if strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				_ = c.Close()
				t.Fatalf("cluster not ready at %s: %s", a, info)
			}
			time.Sleep(100 * time.Millisecond)
		}
		_ = c.Close()
	}
	return addrs
}

// clusterNodePort finds a free port whose cluster bus port (+10000) is free too.
func clusterNodePort(t testing.TB) int {
	t.Helper()
	for i := 0; i < 50; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if port+10000 > 65535 {
			continue
		}
		if bus, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+10000)); err == nil {
			_ = bus.Close()
			return port
		}
	}
	t.Fatal("no free port pair for a cluster node")
	return 0
}
