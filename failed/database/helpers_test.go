package database

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// backend is one database a test runs against: the DSN Go opens and the spec the PHP
// harness gets in LARAQ_FAILED_DB.
type backend struct {
	name string
	dsn  string
	php  string
}

var backendNames = []string{"sqlite", "mariadb", "postgres"}

// forEachBackend runs fn as a parallel subtest per database, each with a fresh database.
func forEachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Helper()
	for _, name := range backendNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, newBackend(t, name))
		})
	}
}

func newBackend(t *testing.T, name string) backend {
	t.Helper()
	switch name {
	case "sqlite":
		dsn := testenv.SQLite(t)
		path := strings.TrimPrefix(dsn, "sqlite:")
		// Laravel's SQLite connector refuses a database file that does not exist yet.
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return backend{name: name, dsn: dsn, php: path}
	case "mariadb":
		dsn := testenv.MariaDB(t)
		return backend{name: name, dsn: dsn, php: dsn}
	default:
		dsn := testenv.Postgres(t)
		return backend{name: name, dsn: dsn, php: dsn}
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func mustOpen(t *testing.T, dsn string, opts Options) failed.Store {
	t.Helper()
	s, err := Open(ctxT(t), dsn, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dsn, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// phpRow is one record as failed_op.php prints it.
type phpRow struct {
	Keys         []string `json:"keys"`
	ID           any      `json:"id"`
	IDType       string   `json:"id_type"`
	Connection   string   `json:"connection"`
	Queue        string   `json:"queue"`
	Payload      []byte   `json:"payload_b64"`
	Exception    []byte   `json:"exception_b64"`
	FailedAt     string   `json:"failed_at"`
	FailedAtType string   `json:"failed_at_type"`
}

type phpHarness struct {
	env testenv.PHPEnv
}

func newPHP(t *testing.T, b backend, extra map[string]string) phpHarness {
	t.Helper()
	testenv.NeedPHP(t)
	return phpHarness{env: testenv.PHPEnv{FailedDB: b.php, Extra: extra}}
}

func (p phpHarness) run(t *testing.T, stdin []byte, args ...string) []byte {
	t.Helper()
	return p.env.Run(t, stdin, "failed_op.php", args...)
}

func (p phpHarness) list(t *testing.T) []phpRow {
	t.Helper()
	var rows []phpRow
	decodeJSON(t, p.run(t, nil, "list"), &rows)
	return rows
}

func (p phpHarness) find(t *testing.T, id string) *phpRow {
	t.Helper()
	var row *phpRow
	decodeJSON(t, p.run(t, nil, "find", id), &row)
	return row
}

// log writes a row through Laravel's provider; exception "" makes PHP throw a real
// RuntimeException with message msg. It returns the ID and the exception text PHP stored.
func (p phpHarness) log(t *testing.T, connection, queue string, payload []byte, exception string) (string, string) {
	t.Helper()
	in := map[string]any{"connection": connection, "queue": queue, "payload_b64": payload, "message": "failed in PHP"}
	if exception != "" {
		in["exception_b64"] = []byte(exception)
	}
	body, _ := json.Marshal(in)
	var out struct {
		ID        any    `json:"id"`
		Exception []byte `json:"exception_b64"`
	}
	decodeJSON(t, p.run(t, body, "log"), &out)
	return anyText(out.ID), string(out.Exception)
}

// artisan runs one of Laravel's queue console commands and returns its output.
func (p phpHarness) artisan(t *testing.T, command string, input map[string]any) string {
	t.Helper()
	arg, _ := json.Marshal(input)
	if input == nil {
		arg = []byte("{}")
	}
	var out struct {
		Exit   int    `json:"exit"`
		Output string `json:"output"`
	}
	decodeJSON(t, p.run(t, nil, "artisan", command, string(arg)), &out)
	if out.Exit != 0 {
		t.Fatalf("%s exited %d: %s", command, out.Exit, out.Output)
	}
	return out.Output
}

func decodeJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode PHP output %q: %v", b, err)
	}
}

// anyText renders an id PHP printed as a string (uuid) or a number (legacy id).
func anyText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// Payloads from the reference samples: S8 (producer bytes), S8r (its reserved copy, key
// order scrambled, `{}` for `[]`), S9 (protected property, `\u0000` escapes) and S11
// (an 8.x job with retryUntil), plus a string job and raw UTF-8 from a re-encoded copy.
var samplePayloads = []string{
	`{"uuid":"12e2071b-a412-410a-8d8a-68721001ce01","displayName":"App\\Jobs\\TestJob","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null,"data":{"commandName":"App\\Jobs\\TestJob","command":"O:16:\"App\\Jobs\\TestJob\":1:{s:5:\"queue\";s:7:\"default\";}"},"id":"12e2071b-a412-410a-8d8a-68721001ce01","attempts":0,"type":"job","tags":[],"silenced":false,"pushedAt":"1729411372.3932"}`,
	`{"pushedAt":"1729411372.3932","uuid":"22e2071b-a412-410a-8d8a-68721001ce02","timeout":null,"tags":{},"id":"22e2071b-a412-410a-8d8a-68721001ce02","maxExceptions":null,"backoff":null,"displayName":"App\\Jobs\\TestJob","maxTries":null,"type":"job","failOnTimeout":false,"silenced":false,"retryUntil":null,"data":{"command":"O:16:\"App\\Jobs\\TestJob\":1:{s:5:\"queue\";s:7:\"default\";}","commandName":"App\\Jobs\\TestJob"},"job":"Illuminate\\Queue\\CallQueuedHandler@call","attempts":3}`,
	`{"uuid":"3d41ed5e-349a-4515-96ce-414d2f07c140","displayName":"App\\Jobs\\ProcessOcr","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":3,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":300,"retryUntil":null,"data":{"commandName":"App\\Jobs\\ProcessOcr","command":"O:19:\"App\\Jobs\\ProcessOcr\":1:{s:11:\"\u0000*\u0000document\";O:45:\"Illuminate\\Contracts\\Database\\ModelIdentifier\":5:{s:5:\"class\";s:19:\"App\\Models\\Document\";s:2:\"id\";i:10;s:9:\"relations\";a:0:{}s:10:\"connection\";s:5:\"mysql\";s:15:\"collectionClass\";N;}}"},"createdAt":1764164918,"delay":null}`,
	`{"uuid":"a2216fc0-f376-437c-bacc-b514310a3d20","displayName":"App\\Jobs\\API\\ABCP\\ArticlesTotalLoader","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":1,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":1642836534,"data":{"commandName":"App\\Jobs\\API\\ABCP\\ArticlesTotalLoader","command":"O:37:\"App\\Jobs\\API\\ABCP\\ArticlesTotalLoader\":1:{s:5:\"queue\";s:8:\"api:abcp\";}"},"id":"a2216fc0-f376-437c-bacc-b514310a3d20","attempts":0,"type":"job","tags":[],"pushedAt":"1642836474.4657"}`,
	`{"uuid":"5b0c2f8e-0000-4000-8000-00000000000a","displayName":"App\\Jobs\\Greet@handle","job":"App\\Jobs\\Greet@handle","maxTries":null,"maxExceptions":null,"backoff":null,"timeout":null,"data":{"name":"Zoë \u00e9t\u00e9 \ud83d\ude00","path":"a\/b"},"attempts":0}`,
	`{"attempts":2,"data":{"name":"Zoë été 😀 ✓ 中文","nul":"x\u0000y"},"uuid":"6c1d3f9f-1111-4111-8111-00000000000b","job":"App\\Jobs\\Greet@handle","tags":{}}`,
}

// classOfPayload is what queue:failed's "Class" column shows for samplePayloads, worked
// out by hand from the payloads.
var classOfPayload = []string{
	`App\Jobs\TestJob`, `App\Jobs\TestJob`, `App\Jobs\ProcessOcr`,
	`App\Jobs\API\ABCP\ArticlesTotalLoader`, `App\Jobs\Greet@handle`, `App\Jobs\Greet@handle`,
}
