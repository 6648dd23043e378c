package metrics

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpser"
)

// invoice stands for App\Jobs\SendInvoice with one property missing (the class has
// $extra) and one untagged field, which takes a property of any case.
type invoice struct {
	OrderID int `php:"orderId"`
	Note    string
}

func (invoice) PHPClass() string { return `App\Jobs\SendInvoice` }

// lockedBuffer is a log sink the worker's goroutines share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

// TestUnknownPropertiesCounted: a worker without the classes' facts whose handler
// decodes a command carrying properties its Go type does not take emits
// EventUnknownProperties for each job, which laraq_command_unknown_properties_total
// counts; each class and property is logged once, and no more than a bounded number of
// them, whatever the payloads carry; properties a field takes (an untagged one in any
// case) are not reported.
func TestUnknownPropertiesCounted(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	rel, err := laraq.ParseRelease("12.40")
	if err != nil {
		t.Fatal(err)
	}
	conn := &laraq.Connection{Client: srv.Client(t, 0), Prefix: testenv.Prefix(t), Release: rel}
	d, err := laraq.NewDispatcher(conn)
	if err != nil {
		t.Fatal(err)
	}
	job := func(extra ...phpser.Entry) *phpser.Value {
		props := append([]phpser.Entry{
			phpser.PublicProp("orderId", phpser.Int(7)),
			phpser.PublicProp("NOTE", phpser.String("n")),
			phpser.PublicProp("extra", phpser.Int(1)),
			{Key: phpser.StrKey("\x00*\x00secret"), Value: *phpser.Int(2)},
		}, extra...)
		return phpser.NewObject(`App\Jobs\SendInvoice`, props...)
	}
	var many []phpser.Entry
	for i := range 1100 {
		many = append(many, phpser.PublicProp(fmt.Sprintf("p%04d", i), phpser.Int(int64(i))))
	}
	for _, v := range []*phpser.Value{job(), job(), job(many...)} {
		if _, err := d.Dispatch(ctx, v); err != nil {
			t.Fatal(err)
		}
	}

	m, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []laraq.Event
	var seen []invoice
	var logs lockedBuffer
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[invoice]) error {
		mu.Lock()
		seen = append(seen, j.Command)
		mu.Unlock()
		return nil
	})
	w, err := laraq.NewWorker(conn, jobs, laraq.WorkerConfig{StopWhenEmpty: true, Sleep: -1,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnEvent: func(e laraq.Event) {
			m.OnEvent(e)
			if e.Kind == laraq.EventUnknownProperties {
				mu.Lock()
				events = append(events, e)
				mu.Unlock()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != laraq.ErrQueueEmpty {
		t.Fatalf("Run: %v", err)
	}

	if len(seen) != 3 || seen[0] != (invoice{OrderID: 7, Note: "n"}) {
		t.Fatalf("the handler saw %+v", seen)
	}
	if len(events) != 3 {
		t.Fatalf("%d EventUnknownProperties, want one per job: %+v", len(events), events)
	}
	if e := events[0]; e.Count != 2 || strings.Join(e.Properties, ",") != "extra,secret" || e.Job == nil || e.Job.Class != `App\Jobs\SendInvoice` {
		t.Errorf("first event: count %d, properties %q", e.Count, e.Properties)
	}
	if e := events[2]; e.Count != 1102 || len(e.Properties) != 16 {
		t.Errorf("the event of 1102 unknown properties: count %d, %d names", e.Count, len(e.Properties))
	}
	v := gather(t, m.Registry())
	if got := v[`laraq_command_unknown_properties_total{class="App\\Jobs\\SendInvoice",queue="default"}`]; got != 2+2+1102 {
		t.Errorf("laraq_command_unknown_properties_total = %v, want %d", got, 2+2+1102)
	}
	out := logs.String()
	if n := strings.Count(out, "property=extra "); n != 1 {
		t.Errorf("$extra logged %d times, want once:\n%s", n, out)
	}
	if n := strings.Count(out, "no field of its Go type takes: the handler does not see it"); n != 1000 {
		t.Errorf("%d properties logged, want the bound, 1000", n)
	}
	if !strings.Contains(out, "more properties no field of their Go type takes than are worth logging") || strings.Contains(out, "property=NOTE") ||
		strings.Contains(out, "property=orderId") {
		t.Errorf("the log:\n%.3000s", out)
	}
}
