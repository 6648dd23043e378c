package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/consumer"
	"github.com/laraq/laraq/handlers"
	"github.com/laraq/laraq/internal/artisanlog"
)

// TestJobLines feeds the event sequences the consumer emits for each way an attempt
// ends and checks the queue:work statuses printed (Laravel 9+ WorkCommand).
func TestJobLines(t *testing.T) {
	const (
		P  = consumer.EventProcessing
		D  = consumer.EventProcessed
		F  = consumer.EventFailed
		R  = consumer.EventReleased
		X  = consumer.EventException
		TO = consumer.EventTimedOut
	)
	for _, c := range []struct {
		name   string
		events []consumer.EventKind
		want   string
	}{
		{"success", []consumer.EventKind{P, D}, "starting success"},
		{"exception, released for a retry", []consumer.EventKind{P, X, R}, "starting released_after_exception"},
		{"handler's Release", []consumer.EventKind{P, R, D}, "starting success"},
		{"exception on the last try", []consumer.EventKind{P, F, X}, "starting failed"},
		{"Fail() returns normally", []consumer.EventKind{P, F, D}, "starting failed success"},
		{"timeout released", []consumer.EventKind{P, TO, R}, "starting released_after_exception"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			h, _ := artisanlog.NewHandler(&buf, artisanlog.Options{Format: artisanlog.JSON})
			l := newJobLines(slog.New(h))
			job := &handlers.Job{ID: "id1", Name: `App\Jobs\X`}
			for _, k := range c.events {
				l.event(consumer.Event{Kind: k, Job: job, Queue: "default", Time: time.Now(), Runtime: time.Millisecond, Err: errors.New("boom")})
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprint(rec[artisanlog.KeyStatus]))
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("statuses %v, want %s", got, c.want)
			}
			if len(l.threw) != 0 {
				t.Errorf("%d attempts still remembered", len(l.threw))
			}
		})
	}
}
