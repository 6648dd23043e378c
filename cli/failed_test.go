package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
)

func TestFailedWithPHP(t *testing.T) {
	testenv.NeedPHP(t)
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", testenv.SQLite}, {"mariadb", testenv.MariaDB}, {"postgres", testenv.Postgres}} {
		dsn := db.dsn
		if db.name == "sqlite" {
			// PHP's SQLite connector wants the file to exist.
			dsn = func(t testing.TB) string {
				d := testenv.SQLite(t)
				if err := os.WriteFile(strings.TrimPrefix(d, "sqlite:"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
				return d
			}
		}
		t.Run(db.name, func(t *testing.T) { failedRoundTrip(t, dsn) })
	}
}

type phpArtisan struct {
	Exit   int    `json:"exit"`
	Output string `json:"output"`
}

func artisan(t *testing.T, php testenv.PHPEnv, command string, input map[string]any) phpArtisan {
	t.Helper()
	if input == nil {
		input = map[string]any{}
	}
	in, _ := json.Marshal(input)
	var res phpArtisan
	if err := json.Unmarshal(php.Run(t, nil, "failed_op.php", "artisan", command, string(in)), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// dispatchPHP queues a job through Laravel's dispatcher and returns the exact payload.
func dispatchPHP(t *testing.T, php testenv.PHPEnv, request string) []byte {
	t.Helper()
	var res struct {
		Payload string `json:"payload"`
	}
	if err := json.Unmarshal(php.Run(t, []byte(request+"\n"), "dispatch.php"), &res); err != nil || res.Payload == "" {
		t.Fatalf("dispatch: %v %+v", err, res)
	}
	return []byte(res.Payload)
}

func logFailedPHP(t *testing.T, php testenv.PHPEnv, connection, queue string, payload []byte) {
	t.Helper()
	in, _ := json.Marshal(map[string]string{"connection": connection, "queue": queue,
		"payload_b64": base64.StdEncoding.EncodeToString(payload), "message": "card declined"})
	php.Run(t, in, "failed_op.php", "log")
}

// failedRoundTrip: PHP's DatabaseUuidFailedJobProvider writes the rows; laraq lists them
// as queue:failed does and retries them as queue:retry does (the same bytes on Redis as
// PHP's own retry of an identical table), and a PHP worker then runs the retried jobs.
func failedRoundTrip(t *testing.T, newDSN func(testing.TB) string) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	prefixA, prefixB := testenv.Prefix(t), testenv.Prefix(t)
	dsnA, dsnB := newDSN(t), newDSN(t)
	record := filepath.Join(t.TempDir(), "record.jsonl")
	phpA := testenv.PHPEnv{Redis: srv, Prefix: prefixA, FailedDB: dsnA, Record: record}
	phpB := testenv.PHPEnv{Redis: srv, Prefix: prefixB, FailedDB: dsnB}
	rA, err := rdb.New(srv.Client(t, 0), rdb.Options{Prefix: prefixA})
	if err != nil {
		t.Fatal(err)
	}

	// Three failures: a job as dispatched (first attempt), the cjson-re-encoded copy a later
	// attempt pops (keys reordered, attempts 1, raw UTF-8), and a job of another queue.
	first := dispatchPHP(t, phpA, `{"class":"App\\Jobs\\PlainJob","props":{"name":"Zoë / first","count":1,"tags":[]}}`)
	dispatchPHP(t, phpA, `{"class":"App\\Jobs\\PlainJob","props":{"name":"Zoë / second","count":2,"meta":{}}}`)
	if _, _, err := rA.Pop(ctx, "default", time.Now().Unix()+90); err != nil {
		t.Fatal(err)
	}
	_, reserved, err := rA.Pop(ctx, "default", time.Now().Unix()+90)
	if err != nil || reserved == nil {
		t.Fatalf("pop: %v", err)
	}
	third := dispatchPHP(t, phpA, `{"class":"App\\Jobs\\PlainJob","props":{"name":"mail","count":3},"queue":"emails"}`)
	if _, err := rA.Clear(ctx, "default"); err != nil {
		t.Fatal(err)
	}
	if _, err := rA.Clear(ctx, "emails"); err != nil {
		t.Fatal(err)
	}
	for _, php := range []testenv.PHPEnv{phpA, phpB} {
		php.Run(t, nil, "failed_op.php", "migrate")
		logFailedPHP(t, php, "redis", "default", first)
		logFailedPHP(t, php, "redis", "default", reserved)
		logFailedPHP(t, php, "redis", "emails", third)
	}
	if !bytes.Contains(reserved, []byte(`"attempts":1`)) {
		t.Fatalf("reserved copy %s", reserved)
	}

	env := map[string]string{"LARAQ_REDIS_URL": "redis://" + srv.Addr + "/0", "LARAQ_REDIS_PREFIX": prefixA}
	db := []string{"--database", dsnA, "--create-failed-table"}

	// list: byte for byte what queue:failed prints.
	want := artisan(t, phpA, "queue:failed", nil)
	if strings.Count(want.Output, `App\Jobs\PlainJob`) != 3 {
		t.Fatalf("queue:failed printed %q", want.Output)
	}
	out, errOut, rc := opsCLI(t, "", env, append([]string{"failed", "list"}, db...)...)
	if rc != 0 || out != want.Output {
		t.Errorf("list rc %d err %q:\n%s\nqueue:failed:\n%s", rc, errOut, out, want.Output)
	}
	out, _, rc = opsCLI(t, "", env, append([]string{"failed", "list", "--json"}, db...)...)
	var rows []failedRow
	if err := json.Unmarshal([]byte(out), &rows); rc != 0 || err != nil || len(rows) != 3 {
		t.Fatalf("list --json: %d %v %s", rc, err, out)
	}
	for _, r := range rows {
		if r.Class != `App\Jobs\PlainJob` || r.Connection != "redis" || len(r.ID) != 36 {
			t.Errorf("row %+v", r)
		}
	}
	if rows[0].Queue != "emails" || rows[2].Queue != "default" {
		t.Errorf("not newest first: %+v", rows)
	}

	// show
	out, _, rc = opsCLI(t, "", env, append([]string{"failed", "show", rows[2].ID}, db...)...)
	if rc != 0 || !strings.Contains(out, "RuntimeException: card declined") || !strings.Contains(out, string(first)) {
		t.Errorf("show: %d\n%s", rc, out)
	}
	_, errOut, rc = opsCLI(t, "", env, append([]string{"failed", "show", "nope"}, db...)...)
	if rc != 1 || !strings.Contains(errOut, "Unable to find failed job with ID [nope].") {
		t.Errorf("show nope: %d %q", rc, errOut)
	}

	// retry --queue emails, then all; PHP's queue:retry does the same on copy B.
	out, errOut, rc = opsCLI(t, "", env, append([]string{"failed", "retry", "--queue", "emails"}, db...)...)
	if rc != 0 || out != "The failed job ["+rows[0].ID+"] has been pushed back onto the queue!\n" || errOut != "" {
		t.Errorf("retry --queue: %d %q %q", rc, out, errOut)
	}
	if res := artisan(t, phpB, "queue:retry", map[string]any{"--queue": "emails"}); res.Exit != 0 {
		t.Fatalf("PHP retry: %+v", res)
	}
	out, errOut, rc = opsCLI(t, "", env, append([]string{"failed", "retry", "all"}, db...)...)
	if rc != 0 || strings.Count(out, "has been pushed back onto the queue!") != 2 {
		t.Errorf("retry all: %d %q %q", rc, out, errOut)
	}
	if res := artisan(t, phpB, "queue:retry", map[string]any{"id": []string{"all"}}); res.Exit != 0 {
		t.Fatalf("PHP retry all: %+v", res)
	}
	cl := srv.Client(t, 0)
	for _, q := range []string{"default", "emails"} {
		got := cl.LRange(ctx, prefixA+"queues:"+q, 0, -1).Val()
		php := cl.LRange(ctx, prefixB+"queues:"+q, 0, -1).Val()
		if len(got) == 0 || strings.Join(got, "\n") != strings.Join(php, "\n") {
			t.Errorf("queue %s after retry:\nlaraq %q\nPHP   %q", q, got, php)
		}
		if a, b := cl.LLen(ctx, prefixA+"queues:"+q+":notify").Val(), cl.LLen(ctx, prefixB+"queues:"+q+":notify").Val(); a != b || a != int64(len(got)) {
			t.Errorf("queue %s notify tokens laraq %d PHP %d", q, a, b)
		}
	}
	if res := artisan(t, phpA, "queue:failed", nil); !strings.Contains(res.Output, "No failed jobs!") {
		t.Errorf("records left after retry: %q", res.Output)
	}

	// A real PHP worker runs the retried jobs.
	for i := 0; i < 2; i++ {
		phpA.Run(t, nil, "work.php", "--once")
	}
	phpA.Run(t, nil, "work.php", "--once", "--queue=emails")
	f, err := os.Open(record)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var handled []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		handled = append(handled, m)
	}
	if len(handled) != 3 {
		t.Fatalf("PHP handled %d jobs, want 3: %v", len(handled), handled)
	}
	for _, h := range handled {
		if h["class"] != `App\Jobs\PlainJob` || h["attempts"] != float64(1) {
			t.Errorf("handled %v", h)
		}
	}
	if keys, _ := testenv.Keys(ctx, cl, prefixA); len(keys) != 0 {
		t.Errorf("keys left after the PHP worker: %q", keys)
	}

	// forget and flush.
	logFailedPHP(t, phpA, "redis", "default", first)
	logFailedPHP(t, phpA, "redis", "default", third)
	out, _, _ = opsCLI(t, "", env, append([]string{"failed", "list", "--json"}, db...)...)
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("%v %s", err, out)
	}
	out, _, rc = opsCLI(t, "", env, append([]string{"failed", "forget", rows[0].ID}, db...)...)
	if rc != 0 || out != "Failed job deleted successfully!\n" {
		t.Errorf("forget: %d %q", rc, out)
	}
	var found any
	json.Unmarshal(phpA.Run(t, nil, "failed_op.php", "find", rows[0].ID), &found)
	if found != nil {
		t.Errorf("PHP still finds %s: %v", rows[0].ID, found)
	}
	_, errOut, rc = opsCLI(t, "", env, append([]string{"failed", "forget", rows[0].ID}, db...)...)
	if rc != 1 || !strings.Contains(errOut, "No failed job matches the given ID.") {
		t.Errorf("forget again: %d %q", rc, errOut)
	}
	out, _, rc = opsCLI(t, "", env, append([]string{"failed", "flush"}, db...)...)
	if rc != 0 || out != "All failed jobs deleted successfully!\n" {
		t.Errorf("flush: %d %q", rc, out)
	}
	if res := artisan(t, phpA, "queue:failed", nil); !strings.Contains(res.Output, "No failed jobs!") {
		t.Errorf("records left after flush: %q", res.Output)
	}
}

func TestFailedRetryWarningsAndErrors(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	prefix := testenv.Prefix(t)
	dsn := testenv.SQLite(t)
	env := map[string]string{"LARAQ_REDIS_URL": "redis://" + srv.Addr + "/0", "LARAQ_REDIS_PREFIX": prefix}
	db := []string{"--database", dsn, "--create-failed-table"}

	// An empty table (created by laraq, as asked) lists as queue:failed does.
	out, _, rc := opsCLI(t, "", env, append([]string{"failed", "list"}, db...)...)
	if rc != 0 || out != "No failed jobs!\n" {
		t.Fatalf("empty list: %d %q", rc, out)
	}
	store := openStore(t, dsn)
	past := time.Now().Add(-time.Hour).Unix()
	body := []byte(`{"uuid":"6f0c1c58-5cb1-4c8e-9a55-0d1c4b0e9d11","displayName":"App\\Jobs\\Late","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"retryUntil":` +
		itoa(past) + `,"data":{"commandName":"App\\Jobs\\Late","command":"O:12:\"App\\Jobs\\Late\":0:{}"},"id":"x1","attempts":3}`)
	id, err := store.Log(ctx, "sqs", "late", body, "Exception: late")
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, rc := opsCLI(t, "", env, append([]string{"failed", "retry", id, "missing-id"}, db...)...)
	if rc != 1 {
		t.Errorf("retry with a missing id: rc %d", rc)
	}
	for _, want := range []string{`recorded on connection "sqs"`, "retryUntil", "Unable to find failed job with ID [missing-id]."} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q: %q", want, errOut)
		}
	}
	if out != "The failed job ["+id+"] has been pushed back onto the queue!\n" {
		t.Errorf("stdout %q", out)
	}
	got := srv.Client(t, 0).LIndex(ctx, prefix+"queues:late", 0).Val()
	if !strings.Contains(got, `"attempts":0`) || !strings.Contains(got, `"uuid":"6f0c1c58-5cb1-4c8e-9a55-0d1c4b0e9d11"`) {
		t.Errorf("pushed %s", got)
	}

	_, errOut, rc = opsCLI(t, "", env, append([]string{"failed", "retry", "--queue", "nothing"}, db...)...)
	if rc != 1 || !strings.Contains(errOut, "Unable to find failed jobs for queue [nothing].") {
		t.Errorf("retry --queue nothing: %d %q", rc, errOut)
	}
	_, errOut, rc = opsCLI(t, "", env, "failed", "frobnicate", "--database", dsn)
	if rc != 1 || !strings.Contains(errOut, `unknown subcommand "frobnicate"`) {
		t.Errorf("unknown subcommand: %d %q", rc, errOut)
	}
	_, errOut, rc = opsCLI(t, "", map[string]string{"LARAQ_QUEUE_FAILED_DRIVER": "dynamodb"}, "failed", "list")
	if rc != 1 || !strings.Contains(errOut, "no failed-job database") {
		t.Errorf("no database: %d %q", rc, errOut)
	}
}

func TestFailedJobClass(t *testing.T) {
	for raw, want := range map[string]string{
		`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"command":"O:17:\"App\\Jobs\\SendMail\":0:{}"}}`: `App\Jobs\SendMail`,
		`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"command":"eyJpdiI6..."}}`:                       `Illuminate\Queue\CallQueuedHandler@call`,
		`{"job":"App\\Handlers\\Legacy@handle","data":{"x":1}}`:                                                      `App\Handlers\Legacy@handle`,
		`{"job":"x","data":{"command":null}}`:                                                                        "x",
		`{}`:                                                                                                         "",
		`not json`:                                                                                                   "",
	} {
		if got := failedJobClass([]byte(raw)); got != want {
			t.Errorf("%s: %q, want %q", raw, got, want)
		}
	}
}

func openStore(t *testing.T, dsn string) failed.Store {
	t.Helper()
	s, err := database.Open(context.Background(), dsn, database.Options{CreateTable: database.CreateIfMissing})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestFailedLegacyDriverWithPHP: the pre-uuid "database" driver, integer IDs, --range.
func TestFailedLegacyDriverWithPHP(t *testing.T) {
	testenv.NeedPHP(t)
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	prefix := testenv.Prefix(t)
	dsn := testenv.SQLite(t)
	if err := os.WriteFile(strings.TrimPrefix(dsn, "sqlite:"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	php := testenv.PHPEnv{Redis: srv, Prefix: prefix, FailedDB: dsn, Extra: map[string]string{"LARAQ_FAILED_DRIVER": "database"}}
	php.Run(t, nil, "failed_op.php", "migrate")
	for i := 0; i < 3; i++ {
		logFailedPHP(t, php, "redis", "default", []byte(`{"uuid":"u`+itoa(int64(i))+`","displayName":"App\\Jobs\\Old","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\Old","command":"O:11:\"App\\Jobs\\Old\":0:{}"},"attempts":2}`))
	}
	env := map[string]string{"LARAQ_REDIS_URL": "redis://" + srv.Addr + "/0", "LARAQ_REDIS_PREFIX": prefix, "LARAQ_QUEUE_FAILED_DRIVER": "database"}
	want := artisan(t, php, "queue:failed", nil)
	out, errOut, rc := opsCLI(t, "", env, "failed", "list", "--database", dsn)
	if rc != 0 || out != want.Output || !strings.Contains(out, "| 3  |") {
		t.Errorf("legacy list rc %d err %q:\n%s\nqueue:failed:\n%s", rc, errOut, out, want.Output)
	}
	out, errOut, rc = opsCLI(t, "", env, "failed", "retry", "--range", "1-2", "--database", dsn)
	if rc != 0 || out != "The failed job [1] has been pushed back onto the queue!\nThe failed job [2] has been pushed back onto the queue!\n" {
		t.Errorf("retry --range: %d %q %q", rc, out, errOut)
	}
	if n := srv.Client(t, 0).LLen(ctx, prefix+"queues:default").Val(); n != 2 {
		t.Errorf("%d jobs pushed, want 2", n)
	}
	var left []map[string]any
	json.Unmarshal(php.Run(t, nil, "failed_op.php", "list"), &left)
	if len(left) != 1 || left[0]["id"] != float64(3) && left[0]["id"] != "3" {
		t.Errorf("PHP lists %v after retrying 1-2", left)
	}
}
