package chaos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestJournalConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	j, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				run := fmt.Sprintf("w/%d-%d", g, i)
				if err := j.Append(Record{Ev: "start", Run: run, Key: "k", T: 1}); err != nil {
					t.Error(err)
					return
				}
				// Append returns once the record is on disk: it must be in the file now.
				b, err := os.ReadFile(path)
				if err != nil || !bytes.Contains(b, []byte(`"run":"`+run+`"`)) {
					t.Errorf("record %s not in the file after Append (%v)", run, err)
					return
				}
				if err := j.Append(Record{Ev: "end", Run: run, Key: "k", Outcome: OutcomeOK, T: 2}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	recs, torn, err := ReadJournalFile(path)
	if err != nil || torn {
		t.Fatalf("read: %v, torn %v", err, torn)
	}
	runs, err := Runs(recs)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1600 {
		t.Fatalf("%d runs, want 1600", len(runs))
	}
	for _, r := range runs {
		if r.Outcome != OutcomeOK || !r.Ended() {
			t.Fatalf("run %+v", r)
		}
	}
}

func TestReadRecords(t *testing.T) {
	good := `{"ev":"start","run":"w/1","worker":"w","key":"k","attempt":1,"t":10}` + "\n" +
		`{"ev":"end","run":"w/1","worker":"w","key":"k","outcome":"ok","t":20}` + "\n"
	recs, torn, err := ReadRecords(strings.NewReader(good+`{"ev":"start","run":"w/2","t`), "j")
	if err != nil || !torn || len(recs) != 2 {
		t.Fatalf("a torn last line: %d records, torn %v, %v", len(recs), torn, err)
	}
	for _, bad := range []struct{ text, want string }{
		{good + "not json\n", "j:3: not a run record"},
		{`{"ev":"middle","run":"w/1","t":1}` + "\n", `j:1: record with ev "middle"`},
		{`{"ev":"unanswered","t":1}` + "\n", "j:1: record without run"},
		{`{"ev":"start","t":1}` + "\n", "j:1: record without run"},
		{`{"ev":"start","run":"w/1"}` + "\n", `j:1: record of run "w/1" without a time`},
		{`{"ev":"end","run":"w/1","t":1}` + "\n", `j:1: end record of run "w/1" without an outcome`},
	} {
		_, _, err := ReadRecords(strings.NewReader(bad.text), "j")
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q", bad.text, err, bad.want)
		}
	}
}

func TestRunsUnanswered(t *testing.T) {
	runs, err := Runs([]Record{
		{Ev: "start", Run: "w/1", T: 1}, {Ev: "end", Run: "w/1", Outcome: OutcomeOK, T: 2}, {Ev: "unanswered", Run: "w/1", T: 3},
	})
	if err != nil || len(runs) != 1 || runs[0].Outcome != OutcomeCancelled || !runs[0].Unanswered || runs[0].Decided != OutcomeOK {
		t.Fatalf("runs %+v, %v", runs, err)
	}
}

func TestRunsRejectsInconsistentJournals(t *testing.T) {
	start := Record{Ev: "start", Run: "w/1", T: 1}
	end := Record{Ev: "end", Run: "w/1", Outcome: OutcomeOK, T: 2}
	gone := Record{Ev: "unanswered", Run: "w/1", T: 3}
	for name, recs := range map[string][]Record{
		"end without start":         {end},
		"started twice":             {start, start},
		"ended twice":               {start, end, end},
		"unanswered before the end": {start, gone},
		"unanswered twice":          {start, end, gone, gone},
	} {
		if _, err := Runs(recs); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// FuzzReadRecords: journals come from other processes (PHP workers); any bytes give
// records or a clear error, and records read back as what was written.
func FuzzReadRecords(f *testing.F) {
	f.Add([]byte(`{"ev":"start","run":"php.1/7/1","worker":"php.1","key":"cxabcdef-job-1","uuid":"u","id":"i","attempt":1,"t":1795469682586138}` + "\n" +
		`{"ev":"end","run":"php.1/7/1","worker":"php.1","key":"cxabcdef-job-1","outcome":"fail","t":1795469682586999}` + "\n"))
	f.Add([]byte("{\"ev\":\"start\",\"run\":\"x\",\"t\":1}\n{\"ev\""))
	f.Add([]byte("\n\n{}\n"))
	f.Add([]byte(`{"ev":"start","run":"g/1","t":5}` + "\n" + `{"ev":"end","run":"g/1","outcome":"ok","t":6}` + "\n" + `{"ev":"unanswered","run":"g/1","t":7}` + "\n"))
	f.Add([]byte(`{"ev":"end","run":"a","outcome":"ok","t":-5}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		recs, _, err := ReadRecords(bytes.NewReader(b), "fuzz")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz:") {
				t.Fatalf("error without the place: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		for _, r := range recs {
			line, _ := json.Marshal(r)
			buf.Write(append(line, '\n'))
		}
		again, torn, err := ReadRecords(&buf, "again")
		if err != nil || torn || len(again) != len(recs) {
			t.Fatalf("records do not read back: %v %v %d/%d", err, torn, len(again), len(recs))
		}
		_, _ = Runs(recs)
	})
}
