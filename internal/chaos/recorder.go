package chaos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Actions a job can carry in its `actions` property, one per attempt (attempt N runs
// actions[N-1]; the last one repeats). Go workers get them from the Recorder, PHP
// workers from jobs_chaos.php, with the same meaning.
const (
	ActOK   = "ok"   // succeed at once
	ActFail = "fail" // throw: the worker retries or fails the job by its rules
	ActHang = "hang" // never answer: the worker's --timeout must end the run
	// "sleep:MS" succeeds after MS milliseconds; "release:S" asks for a release of S seconds.
)

// Sleep is the action that succeeds after d.
func Sleep(d time.Duration) string { return "sleep:" + strconv.FormatInt(d.Milliseconds(), 10) }

// Release is the action that asks the worker to release the job for s seconds.
func Release(s int) string { return "release:" + strconv.Itoa(s) }

// actionFor picks the action of attempt (1-based) from actions.
func actionFor(actions []string, attempt int) string {
	if len(actions) == 0 {
		return ActOK
	}
	i := min(max(attempt, 1), len(actions)) - 1
	return actions[i]
}

// keyPattern finds a suite key in any bytes: hostile payloads carry their key somewhere
// in text no parser may understand.
var keyPattern = regexp.MustCompile(`cx[0-9a-f]{6}-[a-z0-9]+-[0-9]+`)

// FindKey returns the first suite key in b, or "".
func FindKey(b []byte) string { return string(keyPattern.Find(b)) }

// forwarded is the part of the --forward body the recorder reads.
type forwarded struct {
	ID      string `json:"id"`
	UUID    string `json:"uuid"`
	Attempt int    `json:"attempt"`
	Payload struct {
		Data struct {
			Command json.RawMessage `json:"command"`
		} `json:"data"`
	} `json:"payload"`
}

// chaosCommand is App\Jobs\ChaosJob as `laraq decode` prints it.
type chaosCommand struct {
	Key     string   `json:"key"`
	Actions []string `json:"actions"`
}

// parseForwarded reads a --forward body: the job's identity and its actions. A body
// whose command is not a ChaosJob (a hostile payload a worker still forwarded) yields the
// key found anywhere in it and no actions (ok).
func parseForwarded(body []byte) (f forwarded, cmd chaosCommand, err error) {
	if err := json.Unmarshal(body, &f); err != nil {
		return f, cmd, fmt.Errorf("forwarded body is not the --forward JSON: %w", err)
	}
	if len(f.Payload.Data.Command) > 0 && f.Payload.Data.Command[0] == '{' {
		// Properties of other types (a hostile payload's) leave the fields empty.
		_ = json.Unmarshal(f.Payload.Data.Command, &cmd)
	}
	if cmd.Key == "" {
		cmd.Key = FindKey(body)
	}
	if cmd.Key == "" {
		return f, cmd, errors.New("forwarded job carries no chaos key")
	}
	return f, cmd, nil
}

// Recorder is the HTTP service Go workers forward their jobs to (`laraq work --forward
// URL(worker)`). Every request is a run: its start and end are journalled before the
// answer goes out, and the answer follows the job's action for the attempt.
type Recorder struct {
	journal *Journal
	srv     *http.Server
	base    string
	runs    atomic.Int64
	active  atomic.Int64
	errMu   sync.Mutex
	errs    []error
}

// NewRecorder starts a recorder on a free loopback port that journals to path.
func NewRecorder(path string) (*Recorder, error) {
	j, err := OpenJournal(path)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = j.Close()
		return nil, err
	}
	r := &Recorder{journal: j, base: "http://" + l.Addr().String()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /w/{worker}", r.serve)
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(l) }()
	return r, nil
}

// Journal is the file the recorder journals to.
func (r *Recorder) Journal() string { return r.journal.Path() }

// URL is the --forward URL of the worker named worker.
func (r *Recorder) URL(worker string) string { return r.base + "/w/" + worker }

// Active is the number of runs in progress.
func (r *Recorder) Active() int64 { return r.active.Load() }

// Runs is the number of runs started so far.
func (r *Recorder) Runs() int64 { return r.runs.Load() }

// Errors returns what went wrong while serving (bodies that were not jobs, journal
// errors): a scenario fails on any.
func (r *Recorder) Errors() []error {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	return append([]error(nil), r.errs...)
}

func (r *Recorder) fail(w http.ResponseWriter, err error) {
	r.errMu.Lock()
	r.errs = append(r.errs, err)
	r.errMu.Unlock()
	http.Error(w, err.Error(), http.StatusBadRequest)
}

// Close stops serving (requests in flight are cut) and closes the journal.
func (r *Recorder) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = r.srv.Shutdown(ctx)
	_ = r.srv.Close()
	return r.journal.Close()
}

func (r *Recorder) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return // the worker went away before sending the job: no run
	}
	f, cmd, err := parseForwarded(body)
	if err != nil {
		r.fail(w, fmt.Errorf("%s: %w", req.URL.Path, err))
		return
	}
	worker := req.PathValue("worker")
	n := r.runs.Add(1)
	r.active.Add(1)
	defer r.active.Add(-1)
	run := fmt.Sprintf("%s/%d", worker, n)
	start := Record{Ev: "start", Run: run, Worker: worker, Key: cmd.Key, UUID: f.UUID, ID: f.ID, Attempt: f.Attempt, T: nowMicros()}
	if err := r.journal.Append(start); err != nil {
		r.fail(w, err)
		return
	}
	ctx := req.Context()
	// end journals the outcome; it reports whether the answer may go out. When the
	// worker has gone while the record was being synced (its timeout is shorter than a
	// sync on a busy disk), the outcome never reaches it: that is journalled too.
	end := func(outcome string) bool {
		err := r.journal.Append(Record{Ev: "end", Run: run, Worker: worker, Key: cmd.Key, Outcome: outcome, T: nowMicros()})
		if err == nil && outcome != OutcomeCancelled && ctx.Err() != nil {
			err = r.journal.Append(Record{Ev: "unanswered", Run: run, Worker: worker, Key: cmd.Key, T: nowMicros()})
			if err == nil {
				return false
			}
		}
		if err != nil {
			r.fail(w, err)
		}
		return err == nil
	}
	action := actionFor(cmd.Actions, f.Attempt)
	verb, arg, _ := strings.Cut(action, ":")
	switch verb {
	case ActOK:
	case "sleep":
		ms, _ := strconv.Atoi(arg)
		t := time.NewTimer(time.Duration(ms) * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			end(OutcomeCancelled)
			return
		}
	case ActHang:
		<-ctx.Done()
		end(OutcomeCancelled)
		return
	case ActFail:
		if end(OutcomeFail) {
			http.Error(w, fmt.Sprintf("chaos: fail on attempt %d", f.Attempt), http.StatusInternalServerError)
		}
		return
	case "release":
		if end(OutcomeRelease) {
			w.Header().Set("Retry-After", arg)
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		return
	default:
		r.fail(w, fmt.Errorf("%s: job %s: unknown action %q", req.URL.Path, cmd.Key, action))
		return
	}
	if ctx.Err() != nil {
		// The worker gave up on the run (timeout, hard stop, kill) before it was done.
		end(OutcomeCancelled)
		return
	}
	if end(OutcomeOK) {
		w.WriteHeader(http.StatusNoContent)
	}
}
