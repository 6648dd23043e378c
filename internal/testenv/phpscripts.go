package testenv

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

// Dispatched is one output line of testdata/php/dispatch.php: what the release queued.
type Dispatched struct {
	ID      string `json:"id"`
	Payload string `json:"payload"` // the exact bytes in Redis
	Queue   string `json:"queue"`
	Delayed bool   `json:"delayed"`
	Score   *int64 `json:"score"` // the :delayed score, nil when not delayed
	// For chain, batch, event, notification and mail requests and "via":"dispatch":
	// whether anything was queued (false: a ShouldBeUnique duplicate) and every payload
	// that appeared, in push order (the fields above describe the first).
	Dispatched *bool        `json:"dispatched"`
	Pushed     []Dispatched `json:"pushed"`
	Error      string       `json:"error"`
}

// Dispatch runs dispatch.php once with the requests (JSON objects, one per line; see the
// script's header) and returns one Dispatched per request; an "error" line fails the test.
// args are the script's options ("--now=UNIX", "--seed=S"). Batching requests into one
// run keeps the PHP side quick: the release boots once.
func (e PHPEnv) Dispatch(t testing.TB, args []string, requests ...string) []Dispatched {
	t.Helper()
	var in bytes.Buffer
	for _, r := range requests {
		in.WriteString(r)
		in.WriteByte('\n')
	}
	cmd := e.Command("dispatch.php", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = &in, &stdout, &stderr
	runErr := cmd.Run()
	var out []Dispatched
	for _, line := range bytes.Split(bytes.TrimSpace(stdout.Bytes()), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var d Dispatched
		if err := json.Unmarshal(line, &d); err != nil {
			t.Fatalf("%s dispatch.php: line %q: %v\nstderr:\n%s", MajorName(e.major()), line, err, stderr.String())
		}
		if d.Error != "" {
			t.Fatalf("%s dispatch.php: request %d: %s\nstderr:\n%s", MajorName(e.major()), len(out)+1, d.Error, stderr.String())
		}
		out = append(out, d)
	}
	if runErr != nil || len(out) != len(requests) {
		t.Fatalf("%s dispatch.php: %v, %d lines for %d requests\nstderr:\n%s", MajorName(e.major()), runErr, len(out), len(requests), stderr.String())
	}
	return out
}

// Record is one line the test jobs of testdata/php append to PHPEnv.Record (laraq_record):
// the common fields; Fields holds the whole object.
type Record struct {
	Kind     string         `json:"kind"`  // object, string, listener, notification, mail, broadcast
	Event    string         `json:"event"` // handle or failed
	Class    string         `json:"class"`
	ID       string         `json:"id"`
	UUID     string         `json:"uuid"`
	Attempts int64          `json:"attempts"`
	Queue    string         `json:"queue"`
	Name     string         `json:"name"`
	Raw      string         `json:"raw"` // the job's raw body as the worker read it
	Fields   map[string]any `json:"-"`
}

// ReadRecords returns the records in the file, in order (none when it does not exist).
func ReadRecords(t testing.TB, file string) []Record {
	t.Helper()
	recs := ReadJSONLines[Record](t, file)
	for i, r := range ReadJSONLines[map[string]any](t, file) {
		recs[i].Fields = r
	}
	return recs
}

// ReadJSONLines decodes each non-empty line of a JSON-lines file as a T, in order (none
// when the file does not exist); a line that does not decode fails the test.
func ReadJSONLines[T any](t testing.TB, file string) []T {
	t.Helper()
	b, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []T
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("%s: record %q: %v", file, line, err)
		}
		out = append(out, v)
	}
	return out
}
