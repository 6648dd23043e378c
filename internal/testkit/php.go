package testkit

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// ScriptedJob is App\Jobs\Scripted: each attempt does what its script says (ok, throw,
// release, fail, delete, sleep, exit), so PHP's and Go's workers can play the same story.
type ScriptedJob struct {
	Actions       []string `php:"actions"`
	Tag           any      `php:"tag"`
	Tries         any      `php:"tries"`
	MaxExceptions any      `php:"maxExceptions"`
	Backoff       any      `php:"backoff"`
	Timeout       any      `php:"timeout"`
	FailOnTimeout any      `php:"failOnTimeout"`
	RetryUntil    any      `php:"retryUntil"`
	laraq.Queueable
}

// PHPClass is the class a Dispatcher names.
func (ScriptedJob) PHPClass() string { return `App\Jobs\Scripted` }

// PHPRecord is one line a PHP test job appended to LARAQ_RECORD.
type PHPRecord struct {
	Kind     string  `json:"kind"`
	Event    string  `json:"event"`
	Class    string  `json:"class"`
	Method   string  `json:"method"`
	ID       *string `json:"id"`
	UUID     *string `json:"uuid"`
	Attempts int     `json:"attempts"`
	Queue    string  `json:"queue"`
	Conn     string  `json:"connection"`
	Name     string  `json:"name"`
	Raw      string  `json:"raw"`
	Action   string  `json:"action"`
	Props    []Prop  `json:"props"`
	Data     Canon   `json:"data"`
}

// ReadRecords reads every record the PHP test jobs appended to file.
func ReadRecords(t testing.TB, file string) []PHPRecord {
	t.Helper()
	return testenv.ReadJSONLines[PHPRecord](t, file)
}

// dispatched is one line of dispatch.php's output.
type dispatched struct {
	ID      *string  `json:"id"`
	Payload string   `json:"payload"`
	Queue   string   `json:"queue"`
	Delayed bool     `json:"delayed"`
	Score   *float64 `json:"score"`
	Error   string   `json:"error"`
}

// PHPDispatch sends requests (JSON lines) through Laravel's Bus and RedisQueue.
func PHPDispatch(t testing.TB, env testenv.PHPEnv, args []string, requests ...string) []dispatched {
	t.Helper()
	out := env.Run(t, []byte(strings.Join(requests, "\n")+"\n"), "dispatch.php", args...)
	var res []dispatched
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var d dispatched
		if err := json.Unmarshal(line, &d); err != nil || d.Error != "" {
			t.Fatalf("dispatch.php: %s (%v)", line, err)
		}
		res = append(res, d)
	}
	if len(res) != len(requests) {
		t.Fatalf("dispatch.php answered %d lines for %d requests", len(res), len(requests))
	}
	return res
}

// RunWorker runs work.php (Laravel's own Worker, like queue:work) and returns its output.
func RunWorker(t testing.TB, env testenv.PHPEnv, timeout time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	base := env.Command("work.php", args...)
	cmd := exec.CommandContext(ctx, base.Path, base.Args[1:]...)
	cmd.Env = env.Environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("work.php %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// RecordFile is a fresh path for LARAQ_RECORD, removed with the test.
func RecordFile(t testing.TB) string { return filepath.Join(t.TempDir(), "records.jsonl") }

// JSONString quotes s for a request line.
func JSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// PeerRelease is the exact release the peer of this major runs ("v12.67.0" → 12.67.0).
func PeerRelease(t testing.TB, major int) laraq.Release {
	t.Helper()
	return MustRelease(t, strings.TrimPrefix(testenv.Peer(t, major).Tag, "v"))
}
