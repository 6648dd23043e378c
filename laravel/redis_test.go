package laravel

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestClientsWithACLUser connects as an ACL user created on the test server, with the
// queue and the cache on different databases, as a Laravel skeleton has them.
func TestClientsWithACLUser(t *testing.T) {
	srv := testenv.RedisServer(t)
	ctx := context.Background()
	admin := srv.Client(t, 0)
	user := "laraq-" + testenv.RandomName(4)
	if err := admin.Do(ctx, "ACL", "SETUSER", user, "on", ">s3cret-pw", "~*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Do(context.Background(), "ACL", "DELUSER", user) })

	file := writeEnv(t, fmt.Sprintf("REDIS_HOST=127.0.0.1\nREDIS_PORT=%d\nREDIS_USERNAME=%s\nREDIS_PASSWORD=s3cret-pw\nREDIS_DB=2\nREDIS_CACHE_DB=3\n", srv.Port, user))
	c := mustLoad(t, App{EnvFile: file})
	clients, err := testClients(c)
	if err != nil {
		t.Fatal(err)
	}
	defer clients.Close()
	if clients.Cache == clients.Queue {
		t.Fatal("different databases share one client")
	}
	key := "lqcfg-" + testenv.RandomName(4)
	if err := clients.Queue.Set(ctx, key, "queue", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := clients.Cache.Set(ctx, key, "cache", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	who, err := clients.Queue.Do(ctx, "ACL", "WHOAMI").Text()
	if err != nil || who != user {
		t.Errorf("WHOAMI = %q, %v", who, err)
	}
	for db, want := range map[int]string{2: "queue", 3: "cache"} {
		if got := srv.Client(t, db).Get(ctx, key).Val(); got != want {
			t.Errorf("db %d holds %q, want %q", db, got, want)
		}
	}

	// A wrong password fails at the first command, without the password in the error.
	c = mustLoad(t, App{LookupEnv: env("REDIS_URL", fmt.Sprintf("redis://%s:wrong-pw-77@127.0.0.1:%d/2", user, srv.Port))})
	bad, err := testClients(c)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if bad.Cache != bad.Queue {
		t.Error("a URL with a database gives both connections that database: one client")
	}
	err = bad.Queue.Ping(ctx).Err()
	if err == nil || strings.Contains(err.Error(), "wrong-pw-77") {
		t.Errorf("ping with a wrong password: %v", err)
	}
}

// TestClientsTLS starts a TLS-only redis-server with a certificate from a CA made here and
// connects through a rediss:// URL, trusting that CA.
func TestClientsTLS(t *testing.T) {
	testenv.RedisServer(t) // the same peer requirement as every Redis test
	dir := t.TempDir()
	files := testenv.NewTLSFiles(t)
	caFile, certFile, keyFile := files.CAFile, files.CertFile, files.KeyFile
	port := freePort(t)
	ok := startRedisProcess(t, "--port", "0", "--tls-port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--tls-cert-file", certFile, "--tls-key-file", keyFile, "--tls-ca-cert-file", caFile,
		"--tls-auth-clients", "no", "--dir", dir, "--requirepass", "tls-pw")
	testenv.Need(t, ok, "redis-server without TLS support (built without BUILD_TLS)")

	ctx := context.Background()
	lookup := env("REDIS_URL", fmt.Sprintf("rediss://:tls-pw@localhost:%d/4", port), "LARAQ_REDIS_TLS_CA", caFile)
	c := mustLoad(t, App{LookupEnv: lookup})
	clients, err := testClients(c)
	if err != nil {
		t.Fatal(err)
	}
	defer clients.Close()
	if err := clients.Queue.Set(ctx, "tls-key", "v", time.Minute).Err(); err != nil {
		t.Fatalf("SET over TLS: %v", err)
	}
	if got := clients.Cache.Get(ctx, "tls-key").Val(); got != "v" {
		t.Errorf("GET over TLS = %q", got)
	}

	// Without the CA the server certificate is not trusted.
	c = mustLoad(t, App{LookupEnv: env("REDIS_URL", fmt.Sprintf("rediss://:tls-pw@localhost:%d/4", port))})
	untrusted, _ := testClients(c)
	defer untrusted.Close()
	if err := untrusted.Queue.Ping(ctx).Err(); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("ping without the CA: %v", err)
	}
	// A plain connection to the TLS port fails.
	c = mustLoad(t, App{LookupEnv: env("REDIS_URL", fmt.Sprintf("redis://:tls-pw@localhost:%d/4", port))})
	plain, _ := testClients(c)
	defer plain.Close()
	if err := plain.Queue.Ping(ctx).Err(); err == nil {
		t.Error("plain-text ping to a TLS port succeeded")
	}
}

// TestClientsUnixSocket reaches a redis-server on a unix socket through REDIS_HOST (a
// path, as phpredis takes it) and through a unix:// URL.
func TestClientsUnixSocket(t *testing.T) {
	testenv.RedisServer(t)
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	if !startRedisProcess(t, "--port", "0", "--unixsocket", sock, "--dir", dir) {
		t.Fatal("redis-server on a unix socket did not start")
	}
	ctx := context.Background()
	for _, lookup := range []func(string) (string, bool){
		env("REDIS_HOST", sock, "REDIS_DB", "5"),
		env("REDIS_URL", "unix://"+sock+"?db=5"),
	} {
		c := mustLoad(t, App{LookupEnv: lookup})
		if c.Redis.String() != "unix://"+sock+"?db=5" {
			t.Errorf("redis %s", c.Redis)
		}
		clients, err := testClients(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := clients.Queue.Set(ctx, "k", "v", time.Minute).Err(); err != nil {
			t.Errorf("SET over the socket: %v", err)
		}
		if n, err := clients.Queue.Do(ctx, "CLIENT", "INFO").Text(); err != nil || !strings.Contains(n, "db=5") {
			t.Errorf("CLIENT INFO %q %v", n, err)
		}
		clients.Close()
	}
}

// startRedisProcess runs a private redis-server with args (no persistence) until the test
// ends and reports whether it became ready.
func startRedisProcess(t *testing.T, args ...string) bool {
	t.Helper()
	cmd := exec.Command("redis-server", append(args, "--save", "", "--appendonly", "no")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		var log strings.Builder
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
			if strings.Contains(strings.ToLower(sc.Text()), "ready to accept connections") {
				ready <- true
				for sc.Scan() {
				}
				return
			}
		}
		t.Logf("redis-server output:\n%s", log.String())
		ready <- false
	}()
	select {
	case ok := <-ready:
		return ok
	case <-time.After(10 * time.Second):
		return false
	}
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
