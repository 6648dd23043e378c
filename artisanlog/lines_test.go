package artisanlog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/artisanlog"
)

// TestJobLines feeds the event sequences the worker emits for each way an attempt
// ends and checks the queue:work statuses printed (Laravel 9+ WorkCommand).
func TestJobLines(t *testing.T) {
	ev := func(k laraq.EventKind) laraq.Event { return laraq.Event{Kind: k} }
	var (
		P  = ev(laraq.EventProcessing)
		D  = ev(laraq.EventProcessed)
		F  = ev(laraq.EventFailed)
		R  = ev(laraq.EventReleased)
		RX = laraq.Event{Kind: laraq.EventReleased, AfterException: true}
		X  = ev(laraq.EventException)
		TO = ev(laraq.EventTimedOut)
		L  = ev(laraq.EventLoop)
	)
	for _, c := range []struct {
		name   string
		events []laraq.Event
		want   string
	}{
		{"success", []laraq.Event{P, D}, "starting success"},
		{"exception, released for a retry", []laraq.Event{P, X, RX}, "starting released_after_exception"},
		{"handler's Release", []laraq.Event{P, R, D}, "starting success"},
		{"exception on the last try", []laraq.Event{P, F, X}, "starting failed"},
		{"Fail() returns normally", []laraq.Event{P, F, D}, "starting failed success"},
		{"timeout released", []laraq.Event{P, TO, RX}, "starting released_after_exception"},
		{"timeout left reserved", []laraq.Event{P, TO}, "starting"},
		{"released at a hard stop", []laraq.Event{P, R}, "starting"},
		{"no handler, released by the policy", []laraq.Event{R}, ""},
		{"heartbeats print nothing", []laraq.Event{L, P, L, D, L}, "starting success"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			h, _ := artisanlog.NewHandler(&buf, artisanlog.Options{Format: artisanlog.JSON})
			l := artisanlog.NewJobLines(slog.New(h))
			job := &laraq.JobInfo{ID: "id1", Name: `App\Jobs\X`}
			for _, e := range c.events {
				e.Queue, e.Time, e.Runtime, e.Err = "default", time.Now(), time.Millisecond, errors.New("boom")
				if e.Kind != laraq.EventLoop {
					e.Job = job
				}
				l.OnEvent(e)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				if line == "" {
					continue
				}
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprint(rec[artisanlog.KeyStatus]))
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("statuses %v, want %s", got, c.want)
			}
		})
	}
}

var dates = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)

// TestJobLinesNameTheMiddleware: the line of an outcome a middleware decided names it,
// in every format; other lines are queue:work's own.
func TestJobLinesNameTheMiddleware(t *testing.T) {
	job := &laraq.JobInfo{ID: "id1", Name: `App\Jobs\X`}
	events := []laraq.Event{
		{Kind: laraq.EventProcessing, Job: job},
		{Kind: laraq.EventReleased, Job: job, Middleware: "WithoutOverlapping", Decision: laraq.DecisionReleased},
		{Kind: laraq.EventProcessed, Job: job, Runtime: time.Millisecond, Middleware: "WithoutOverlapping", Decision: laraq.DecisionReleased},
		{Kind: laraq.EventProcessing, Job: job},
		{Kind: laraq.EventFailed, Job: job, Runtime: time.Millisecond, Middleware: "FailOnException", Decision: laraq.DecisionFailed},
	}
	for format, want := range map[artisanlog.Format][]string{
		artisanlog.Artisan: {
			`  DATE App\Jobs\X ..................................... RUNNING`,
			`  DATE App\Jobs\X ................................. 1.00ms DONE (released by WithoutOverlapping)`,
			`  DATE App\Jobs\X ..................................... RUNNING`,
			`  DATE App\Jobs\X ................................. 1.00ms FAIL (failed by FailOnException)`,
		},
		artisanlog.Artisan8: {
			`[DATE][id1] Processing: App\Jobs\X`,
			`[DATE][id1] Processed:  App\Jobs\X (released by WithoutOverlapping)`,
			`[DATE][id1] Processing: App\Jobs\X`,
			`[DATE][id1] Failed:     App\Jobs\X (failed by FailOnException)`,
		},
		artisanlog.Text: {
			`job_status=success`, `middleware=WithoutOverlapping decision=released`, `middleware=FailOnException decision=failed`,
		},
	} {
		var buf bytes.Buffer
		h, _ := artisanlog.NewHandler(&buf, artisanlog.Options{Format: format, Location: time.UTC})
		l := artisanlog.NewJobLines(slog.New(h))
		for _, e := range events {
			e.Queue = "default"
			l.OnEvent(e)
		}
		out := dates.ReplaceAllString(buf.String(), "DATE") // the lines are stamped when written
		if format == artisanlog.Text {
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("text: no %q in\n%s", w, out)
				}
			}
			continue
		}
		if got := strings.Split(strings.TrimRight(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\n%s\nwant\n%s", format, out, strings.Join(want, "\n"))
		}
	}
}
