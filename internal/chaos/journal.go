package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"time"
)

// Record is one line of a run journal. A run writes a start record when the job begins
// and an end record when the job has decided its outcome, before the worker hears of it;
// both are on disk (fsync) before the job goes on, so a worker killed with -9 cannot
// lose a record of a run it started or finished.
type Record struct {
	Ev      string `json:"ev"`     // "start", "end" or "unanswered"
	Run     string `json:"run"`    // unique per run: worker/process/number
	Worker  string `json:"worker"` // the worker process that ran it
	Key     string `json:"key"`    // the suite's identity of the job
	UUID    string `json:"uuid,omitempty"`
	ID      string `json:"id,omitempty"`      // the payload's id (start only)
	Attempt int    `json:"attempt,omitempty"` // the attempt the worker reported (start only)
	Outcome string `json:"outcome,omitempty"` // end only: see the Outcome constants
	T       int64  `json:"t"`                 // Unix microseconds
}

// An "unanswered" record follows an end record when the worker had gone (its timeout,
// a hard stop, a kill) before the outcome could be sent: the journal's sync took longer
// than the worker waited. The worker then handled the run as timed out or interrupted,
// whatever the end record says, and the run counts as cancelled.

// Outcomes of a run (Record.Outcome of the end record).
const (
	OutcomeOK        = "ok"        // the job succeeded: the worker must delete it
	OutcomeFail      = "fail"      // the job threw: retried or failed by the worker's rules
	OutcomeRelease   = "release"   // the job asked to be released
	OutcomeCancelled = "cancelled" // the worker went away mid-run: timeout, hard stop, kill
)

// Journal appends records to a file and syncs them to disk before Append returns.
// Appends from many goroutines are committed together (one write and one fsync per
// group), which keeps tens of thousands of runs per minute cheap on a real disk.
type Journal struct {
	f    *os.File
	mu   sync.Mutex
	cond *sync.Cond
	buf  []byte // records waiting for the next commit
	seq  uint64 // commits started
	done uint64 // commits finished
	err  error  // the first write or sync error; every later Append returns it
	busy bool   // a commit is running
}

// OpenJournal opens (creating or appending to) the journal file at path.
func OpenJournal(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("chaos: journal: %w", err)
	}
	j := &Journal{f: f}
	j.cond = sync.NewCond(&j.mu)
	return j, nil
}

// Append writes recs and returns once they are on disk.
func (j *Journal) Append(recs ...Record) error {
	var line []byte
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("chaos: journal: %w", err)
		}
		line = append(append(line, b...), '\n')
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return j.err
	}
	j.buf = append(j.buf, line...)
	// A commit takes the whole buffer when it starts, so our bytes go out with the next
	// commit to start: the one after any commit running now.
	want := j.seq + 1
	for j.done < want && j.err == nil {
		if !j.busy {
			j.commit()
			continue
		}
		j.cond.Wait()
	}
	return j.err
}

// commit writes and syncs the pending bytes; j.mu is held on entry and exit.
func (j *Journal) commit() {
	j.busy = true
	j.seq++
	data := j.buf
	j.buf = nil
	// Write outside the lock so the next group can gather meanwhile.
	j.mu.Unlock()
	_, err := j.f.Write(data)
	if err == nil {
		err = j.f.Sync()
	}
	j.mu.Lock()
	if err != nil && j.err == nil {
		j.err = fmt.Errorf("chaos: journal %s: %w", j.f.Name(), err)
	}
	j.done = j.seq
	j.busy = false
	j.cond.Broadcast()
}

// Close closes the file.
func (j *Journal) Close() error { return j.f.Close() }

// Path is the journal's file.
func (j *Journal) Path() string { return j.f.Name() }

// ReadRecords reads a journal. A last line without its newline is a record torn by a
// kill in the middle of a write and is skipped (torn reports it); any other line that is
// not a record is an error naming the line.
func ReadRecords(r io.Reader, name string) (recs []Record, torn bool, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] != '\n' {
			return recs, true, nil
		}
		if err == io.EOF {
			return recs, false, nil
		}
		if err != nil {
			return recs, false, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var rec Record
		if err := json.Unmarshal(line, &rec); err != nil {
			return recs, false, fmt.Errorf("%s:%d: not a run record: %w", name, n, err)
		}
		if err := rec.check(); err != nil {
			return recs, false, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		recs = append(recs, rec)
	}
}

// ReadJournalFile reads the journal at path (see ReadRecords).
func ReadJournalFile(path string) ([]Record, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	return ReadRecords(f, path)
}

func (r Record) check() error {
	switch {
	case r.Ev != "start" && r.Ev != "end" && r.Ev != "unanswered":
		return fmt.Errorf("record with ev %q: want start, end or unanswered", r.Ev)
	case r.Run == "":
		return errors.New("record without run")
	case r.T <= 0:
		return fmt.Errorf("record of run %q without a time", r.Run)
	case r.Ev == "end" && r.Outcome == "":
		return fmt.Errorf("end record of run %q without an outcome", r.Run)
	}
	return nil
}

// Run is one run of a job: its start record joined with its end record.
type Run struct {
	ID      string
	Worker  string
	Key     string
	UUID    string
	JobID   string
	Attempt int
	Start   time.Time
	End     time.Time // zero when the run has no end record (its process died mid-run)
	Outcome string    // "" when End is zero
	// Unanswered says the worker had gone before the outcome in the end record reached
	// it; Outcome is then OutcomeCancelled and Decided what the end record said.
	Unanswered bool
	Decided    string
}

// Ended reports whether the run has an end record.
func (r Run) Ended() bool { return !r.End.IsZero() }

// Runs joins start, end and unanswered records into runs, sorted by start time. An end
// record without its start, or a second start or end of one run, is an error: the
// journal would not be telling the truth.
func Runs(recs []Record) ([]Run, error) {
	byID := map[string]*Run{}
	var order []*Run
	for _, r := range recs {
		run := byID[r.Run]
		switch r.Ev {
		case "start":
			if run != nil {
				return nil, fmt.Errorf("run %q started twice", r.Run)
			}
			run = &Run{ID: r.Run, Worker: r.Worker, Key: r.Key, UUID: r.UUID, JobID: r.ID, Attempt: r.Attempt, Start: micros(r.T)}
			byID[r.Run] = run
			order = append(order, run)
		case "end":
			if run == nil {
				return nil, fmt.Errorf("run %q ended without a start record", r.Run)
			}
			if run.Ended() {
				return nil, fmt.Errorf("run %q ended twice", r.Run)
			}
			run.End, run.Outcome = micros(r.T), r.Outcome
		case "unanswered":
			if run == nil || !run.Ended() {
				return nil, fmt.Errorf("run %q unanswered before it ended", r.Run)
			}
			if run.Unanswered {
				return nil, fmt.Errorf("run %q unanswered twice", r.Run)
			}
			run.Unanswered, run.Decided, run.Outcome = true, run.Outcome, OutcomeCancelled
		}
	}
	out := make([]Run, len(order))
	for i, r := range order {
		out[i] = *r
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Start.Before(out[b].Start) })
	return out, nil
}

func micros(us int64) time.Time { return time.UnixMicro(us) }

// nowMicros is the record time of now.
func nowMicros() int64 { return time.Now().UnixMicro() }
