package laravel

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// TestTLSConnections: a redis-server with TLS on loopback, its CA made by the test, is
// reached through every way an application or laraq names TLS: a rediss:// URL, the
// connection's 'scheme' => 'tls' (REDIS_SCHEME), a tls:// host. Each client writes
// through the TLS port what the plain port of the same server then reads.
func TestTLSConnections(t *testing.T) {
	files := testenv.NewTLSFiles(t)
	r := testenv.PrivateTLSRedis(t, files)
	plain := r.Client(t, 0)
	port := strconv.Itoa(r.TLSPort)
	schemeConfig := replace(t, "'host' => env('REDIS_HOST', '127.0.0.1'),", "'scheme' => env('REDIS_SCHEME', 'tcp'),\n            'host' => env('REDIS_HOST', '127.0.0.1'),")
	for _, tc := range []struct {
		name  string
		edits map[string]func(string) string
		env   []string
	}{
		{name: "rediss URL flag", env: []string{"LARAQ_REDIS_URL", "rediss://127.0.0.1:" + port + "/0"}},
		{name: "rediss REDIS_URL", edits: map[string]func(string) string{".env": appendEnv("REDIS_URL=rediss://127.0.0.1:" + port + "/0\n")}},
		{name: "tls REDIS_URL", edits: map[string]func(string) string{".env": appendEnv("REDIS_URL=tls://127.0.0.1:" + port + "\n")}},
		{name: "scheme tls from REDIS_SCHEME", edits: map[string]func(string) string{
			"config/database.php": schemeConfig,
			".env":                appendEnv("REDIS_SCHEME=tls\nREDIS_PORT=" + port + "\n"),
		}},
		{name: "tls:// host", edits: map[string]func(string) string{".env": appendEnv("REDIS_HOST=tls://127.0.0.1\nREDIS_PORT=" + port + "\n")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := skeletonApp(t, "laravel-13", tc.edits)
			kv := append([]string{"LARAQ_REDIS_TLS_CA", files.CAFile}, tc.env...)
			cfg := mustLoad(t, App{EnvFile: filepath.Join(root, ".env"), LookupEnv: env(kv...)})
			if !cfg.Redis.TLS || cfg.Redis.Addrs[0] != "127.0.0.1:"+port {
				t.Fatalf("redis %s: want TLS to 127.0.0.1:%s", cfg.Redis, port)
			}
			ctx := context.Background()
			conn, err := cfg.Connect(ctx, ConnectOptions{WithoutFailedStore: true})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			key := testenv.Prefix(t) + "tls"
			if err := conn.Client.Set(ctx, key, tc.name, 0).Err(); err != nil {
				t.Fatal(err)
			}
			if got, err := plain.Get(ctx, key).Result(); err != nil || got != tc.name {
				t.Errorf("the plain port reads %q, %v", got, err)
			}
		})
	}
}

// TestTLSBadCertificate: a certificate this machine does not trust, or that does not
// carry the name connected to, fail Connect at once, saying what is wrong and what to
// set. (A TLS client on Redis' plain port gets no answer at all: Redis waits for the end
// of a line the ClientHello never sends, so that case is a timeout like any other.)
func TestTLSBadCertificate(t *testing.T) {
	files := testenv.NewTLSFiles(t)
	r := testenv.PrivateTLSRedis(t, files)
	tlsURL := "rediss://127.0.0.1:" + strconv.Itoa(r.TLSPort) + "/0"
	for _, tc := range []struct {
		name string
		env  []string
		want []string
	}{
		{"unknown authority", []string{"LARAQ_REDIS_URL", tlsURL, "LARAQ_REDIS_TLS_CA", files.OtherCAFile},
			[]string{"signed by an authority this machine does not trust", "LARAQ_REDIS_TLS_CA", "127.0.0.1:" + strconv.Itoa(r.TLSPort)}},
		{"system roots", []string{"LARAQ_REDIS_URL", tlsURL},
			[]string{"signed by an authority this machine does not trust"}},
		{"wrong host name", []string{"LARAQ_REDIS_URL", tlsURL, "LARAQ_REDIS_TLS_CA", files.CAFile, "LARAQ_REDIS_TLS_SERVER_NAME", "redis.example"},
			[]string{"does not carry the name connected to", "redis.example", "LARAQ_REDIS_TLS_SERVER_NAME"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := mustLoad(t, App{LookupEnv: env(tc.env...)})
			conn, err := cfg.Connect(context.Background(), ConnectOptions{WithoutFailedStore: true})
			if err == nil {
				conn.Close()
				t.Fatal("Connect succeeded")
			}
			if !errors.Is(err, ErrRedisTLS) {
				t.Errorf("%v is not ErrRedisTLS", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
		})
	}
}

func appendEnv(lines string) func(string) string {
	return func(s string) string { return s + lines }
}
