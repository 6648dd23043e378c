package cli

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// pushCapturedEncrypted pushes the ShouldBeEncrypted job Laravel 11 wrote (captured with
// testenv.CaptureAppKey) to queue, and returns an .env with that APP_KEY.
func pushCapturedEncrypted(t *testing.T, r *testenv.Redis, prefix, queue string) string {
	t.Helper()
	raw, err := os.ReadFile(testenv.Testdata("laravel-payloads", "encrypted", "L11-encrypted.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Client(t, 0).RPush(context.Background(), prefix+"queues:"+queue, strings.TrimSpace(string(raw))).Err(); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(env, []byte("APP_NAME=shop\nAPP_KEY="+testenv.CaptureAppKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return env
}

// TestForwardRefusesDecryptedJobOverPlainHTTP: a ShouldBeEncrypted job is not sent,
// decrypted, over plain http:// to a host that is not loopback: it is failed at once with
// the reason, kept in failed_jobs for queue:retry, and the service is never asked.
func TestForwardRefusesDecryptedJobOverPlainHTTP(t *testing.T) {
	r := testenv.RedisServer(t)
	prefix, queue := testenv.Prefix(t), "enc"+testenv.RandomName(3)
	env := pushCapturedEncrypted(t, r, prefix, queue)
	dsn := testenv.SQLite(t)
	// .invalid never resolves: a request would fail differently, after a DNS lookup.
	out, errOut, rc := runWorkCLI(t, nil, "--env-file", env, "--forward", "http://hooks.example.invalid/run", "--redis", "redis://"+r.Addr+"/0",
		"--prefix", prefix, "--queue", queue, "--stop-when-empty", "--no-cache", "--sleep", "0", "--tries", "3", "--database", dsn, "--create-failed-table")
	if rc != 0 {
		t.Fatalf("rc %d\n%s\n%s", rc, out, errOut)
	}
	if !strings.Contains(errOut, "ShouldBeEncrypted jobs are failed instead of sent decrypted") {
		t.Errorf("no start warning:\n%s", errOut)
	}
	rows := openStore(t, dsn)
	all, err := rows.All(context.Background())
	if err != nil || len(all) != 1 {
		t.Fatalf("%d failed rows (%v), want 1:\n%s", len(all), err, errOut)
	}
	if ex := all[0].Exception; !strings.Contains(ex, "refusing to send the ShouldBeEncrypted job") || !strings.Contains(ex, "--forward-insecure") || !strings.Contains(ex, "plain http://") {
		t.Errorf("exception %q does not say why", ex)
	}
	// Failed at once: retrying cannot change the URL's scheme.
	if n := strings.Count(out, "FAIL"); n != 1 || strings.Contains(out, "RELEASE") {
		t.Errorf("want one FAIL line and no retry:\n%s", out)
	}
}

// TestForwardInsecureSendsDecryptedJob: with --forward-insecure the job goes, decrypted,
// to a service on this machine's own non-loopback address.
func TestForwardInsecureSendsDecryptedJob(t *testing.T) {
	ip := nonLoopbackIP(t)
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		got, _ = io.ReadAll(req.Body)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })

	r := testenv.RedisServer(t)
	prefix, queue := testenv.Prefix(t), "enc"+testenv.RandomName(3)
	env := pushCapturedEncrypted(t, r, prefix, queue)
	out, errOut, rc := runWorkCLI(t, nil, "--env-file", env, "--forward", "http://"+l.Addr().String()+"/run", "--forward-insecure",
		"--redis", "redis://"+r.Addr+"/0", "--prefix", prefix, "--queue", queue, "--stop-when-empty", "--no-cache", "--sleep", "0", "--database", "null")
	if rc != 0 || !strings.Contains(out, "DONE") {
		t.Fatalf("rc %d\n%s\n%s", rc, out, errOut)
	}
	if !strings.Contains(string(got), `"secret":"s3cr3t"`) {
		t.Errorf("the service did not get the decrypted command:\n%s", got)
	}
	if !strings.Contains(errOut, "--forward-insecure: ShouldBeEncrypted jobs are sent decrypted") {
		t.Errorf("no warning about --forward-insecure:\n%s", errOut)
	}
}

// nonLoopbackIP is an IPv4 address of this machine that is not loopback.
func nonLoopbackIP(t *testing.T) string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	t.Skip("this machine has no non-loopback IPv4 address to serve on")
	return ""
}
