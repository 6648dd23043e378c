package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// Secrets planted in every setting that can hold one. Each is distinctive, so that a
// hit anywhere is a leak.
const (
	plantedRedis    = "redisPW-7q1Zx"
	plantedFwdPW    = "fwdPW-3kLm9"
	plantedFwdToken = "fwdTOKEN-8aQw2"
	plantedSentinel = "sentinelPW-5tYu4"
	plantedDB       = "dbPW-2rEw6"
	plantedCache    = "cachePW-9oPl1"
	testenvDBPW     = "laraq-pw" // testenv's MariaDB account, in the failed-job DSN
)

type secretProbe struct {
	Name string `php:"name"`
}

func (secretProbe) PHPClass() string { return `App\Jobs\SecretProbe` }

// TestPlantedSecretsStaySecret plants a secret in every setting that can hold one — the
// Redis URL, the --forward URL's user information and token, the Sentinel password, the
// failed-job and cache database DSNs, APP_KEY — and runs the error paths: a service that
// answers 500 echoing the request (its URL, its Basic credentials), one that times out,
// one that is down, failed jobs (failed_jobs rows in MariaDB, Horizon's records), an
// unreachable Sentinel, an unreachable database. No secret shows in the logs, the job
// lines, the failed rows, Horizon's records, /metrics or /healthz.
func TestPlantedSecretsStaySecret(t *testing.T) {
	srv := testenv.PrivateRedis(t, "--requirepass", plantedRedis)
	redisURL := fmt.Sprintf("redis://:%s@%s/0", plantedRedis, srv.Addr)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, Password: plantedRedis})
	defer client.Close()
	ctx := context.Background()
	prefix, queue := testenv.Prefix(t), "sec"+testenv.RandomName(3)
	failedDSN := testenv.MariaDB(t)
	appKey := strings.TrimPrefix(testenv.CaptureAppKey, "base64:")

	// The service: "echo" answers 500 with the request line and headers in its body,
	// "slow" outlives --timeout, the rest succeed.
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		switch {
		case bytes.Contains(body, []byte(`"echo"`)):
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, "cannot handle %s authorization=%s\n", req.URL.RequestURI(), req.Header.Get("Authorization"))
		case bytes.Contains(body, []byte(`"slow"`)):
			time.Sleep(2 * time.Second)
		}
	}))
	defer service.Close()
	forwardURL := fmt.Sprintf("http://bob:%s@%s/hook?token=%s", plantedFwdPW, strings.TrimPrefix(service.URL, "http://"), plantedFwdToken)

	envFile := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(envFile, []byte("APP_NAME=secrets\nAPP_KEY="+testenv.CaptureAppKey+"\nCACHE_STORE=database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := map[string]string{
		// Ignored, with a warning, since --redis names the server: the warning must not show them.
		"LARAQ_REDIS_SENTINEL": "127.0.0.1:1", "LARAQ_REDIS_SENTINEL_PASSWORD": plantedSentinel,
		"LARAQ_CACHE_DATABASE": "mysql://shop:" + plantedCache + "@127.0.0.1:1/shop",
	}
	getenv := func(k string) string { return environ[k] }

	d, err := laraq.NewDispatcher(&laraq.Connection{Client: client, Prefix: prefix, Queue: queue, Release: laraq.Release{Major: 11, Minor: 56}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fine", "echo", "slow"} {
		if _, err := d.Dispatch(ctx, secretProbe{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	encrypted, err := os.ReadFile(testenv.Testdata("laravel-payloads", "encrypted", "L11-encrypted.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := client.RPush(ctx, prefix+"queues:"+queue, strings.TrimSpace(string(encrypted))).Err(); err != nil {
		t.Fatal(err)
	}

	var outputs []string
	add := func(what, s string) { outputs = append(outputs, what+":\n"+s) }

	// Run A: the service answers, fails, times out.
	runCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	stdout, stderr, done := mainAsync(runCtx, []string{"work", "--env-file", envFile, "--redis", redisURL, "--prefix", prefix, "--queue", queue,
		"--forward", forwardURL, "--database", failedDSN, "--create-failed-table", "--horizon", "on", "--metrics-addr", "127.0.0.1:0",
		"--tries", "1", "--timeout", "1", "--sleep", "0.1", "--log-format", "json", "--verbose"}, WithGetenv(getenv))
	waitWithin(t, 60*time.Second, "four jobs done or failed", func() bool {
		return strings.Count(stdout.String(), `"job_status":"success"`)+strings.Count(stdout.String(), `"job_status":"failed"`) >= 4
	})
	addr := regexp.MustCompile(`"serving metrics","addr":"([^"]+)"`).FindStringSubmatch(stderr.String())
	if addr == nil {
		t.Fatalf("no metrics address:\n%s", stderr.String())
	}
	for _, path := range []string{"/metrics", "/healthz"} {
		resp, err := http.Get("http://" + addr[1] + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		add(path, string(b))
	}
	cancel()
	<-done
	add("run A stdout", stdout.String())
	add("run A stderr", stderr.String())
	for _, want := range []string{`500 Internal Server Error: cannot handle /hook?token=xxxxx authorization=Basic xxxxx`, "has timed out", "LARAQ_REDIS_SENTINEL is ignored"} {
		if !strings.Contains(stdout.String()+stderr.String()+failedText(t, failedDSN), want) {
			t.Errorf("run A did not go down the path that says %q", want)
		}
	}

	// Run B: the service is down.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	downURL := fmt.Sprintf("http://bob:%s@%s/hook?token=%s", plantedFwdPW, l.Addr(), plantedFwdToken)
	l.Close()
	if _, err := d.Dispatch(ctx, secretProbe{Name: "down"}); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ := runWorkCLI(t, nil, "--redis", redisURL, "--prefix", prefix, "--queue", queue, "--forward", downURL, "--database", failedDSN,
		"--horizon", "on", "--tries", "1", "--stop-when-empty", "--sleep", "0", "--no-cache")
	add("run B stdout", out)
	add("run B stderr", errOut)
	if !strings.Contains(failedText(t, failedDSN), "connection refused") {
		t.Error("run B's failed row does not say the service was down")
	}

	// Run C: no Sentinel answers. Run D: the failed-job database does not answer.
	_, errOut, rc := opsCLI(t, "", map[string]string{"LARAQ_REDIS_SENTINEL_PASSWORD": plantedSentinel}, "work", "--redis-sentinel", "127.0.0.1:1", "--database", "null")
	if rc != 1 {
		t.Errorf("run C: rc %d", rc)
	}
	add("run C stderr", errOut)
	_, errOut, rc = opsCLI(t, "", nil, "work", "--redis", redisURL, "--database", "mysql://shop:"+plantedDB+"@127.0.0.1:1/shop")
	if rc != 1 {
		t.Errorf("run D: rc %d", rc)
	}
	add("run D stderr", errOut)

	add("failed_jobs", failedText(t, failedDSN))
	add("redis", dumpRedis(t, client))
	if !strings.Contains(outputs[len(outputs)-1], "laravel_horizon:failed_jobs") {
		t.Error("no Horizon failed-jobs record in Redis: the Horizon path did not run")
	}
	for _, o := range outputs {
		for _, s := range []string{plantedRedis, plantedFwdPW, plantedFwdToken, plantedSentinel, plantedDB, plantedCache, testenvDBPW, appKey,
			base64.StdEncoding.EncodeToString([]byte("bob:" + plantedFwdPW))} {
			if strings.Contains(o, s) {
				t.Errorf("%q leaks in %s", s, o[:min(len(o), 4000)])
			}
		}
	}
}

// failedText is every failed_jobs row's payload and exception.
func failedText(t *testing.T, dsn string) string {
	t.Helper()
	rows, err := openStore(t, dsn).All(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s %s %s\n%s\n", r.UUID, r.Queue, r.Payload, r.Exception)
	}
	return b.String()
}

// dumpRedis writes every key of the server's database 0 with its values.
func dumpRedis(t *testing.T, c *redis.Client) string {
	t.Helper()
	ctx := context.Background()
	keys, err := testenv.Keys(ctx, c, "")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, k := range keys {
		typ := c.Type(ctx, k).Val()
		var v any
		switch typ {
		case "string":
			v = c.Get(ctx, k).Val()
		case "hash":
			v = c.HGetAll(ctx, k).Val()
		case "list":
			v = c.LRange(ctx, k, 0, -1).Val()
		case "set":
			v = c.SMembers(ctx, k).Val()
		case "zset":
			v = c.ZRangeWithScores(ctx, k, 0, -1).Val()
		}
		fmt.Fprintf(&b, "%s (%s): %v\n", k, typ, v)
	}
	return b.String()
}
