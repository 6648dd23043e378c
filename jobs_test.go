package laraq_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/laraqtest"
	"github.com/laraq/laraq/payload"
)

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}

func TestRegistryRules(t *testing.T) {
	noop := func(ctx context.Context, job *laraq.JobInfo) error { return nil }
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\A`, noop)
	mustPanic(t, "duplicate", func() { reg.HandleFunc(`App\Jobs\A`, noop) })
	mustPanic(t, "duplicate through Handle", func() {
		laraq.HandleClass(reg, `App\Jobs\A`, func(context.Context, *laraq.Job[SendInvoice]) error { return nil })
	})
	mustPanic(t, "empty class", func() { reg.HandleFunc("", noop) })
	mustPanic(t, "nil handler", func() { reg.HandleFunc(`App\Jobs\B`, nil) })
	mustPanic(t, "alias of a handled class", func() { reg.Alias(`App\Jobs\A`, `App\Jobs\C`) })
	reg.Alias(`App\Jobs\Old`, `App\Jobs\Older`)
	reg.Alias(`App\Jobs\Older`, `App\Jobs\A`)
	reg.Alias(`App\Jobs\P`, `App\Jobs\Q`)
	mustPanic(t, "alias cycle", func() { reg.Alias(`App\Jobs\Q`, `App\Jobs\P`) })
	if as, ok := reg.Handles(`App\Jobs\Old`); !ok || as != `App\Jobs\A` {
		t.Errorf("chained alias: %q %v", as, ok)
	}
	// Exact match only: no prefix or case folding.
	for _, c := range []string{`App\Jobs`, `app\jobs\a`, `App\Jobs\A@handle`, `\App\Jobs\A`} {
		if _, ok := reg.Handles(c); ok {
			t.Errorf("%q matched", c)
		}
	}
	if got := strings.Join(reg.Classes(), ","); got != `App\Jobs\A` || reg.Len() != 1 {
		t.Errorf("classes %s", got)
	}
	reg.Fallback(noop)
	if as, ok := reg.Handles(`App\Jobs\Anything`); !ok || as != laraq.FallbackClass {
		t.Errorf("fallback: %q %v", as, ok)
	}
	if as, _ := reg.Handles(`App\Jobs\A`); as != `App\Jobs\A` {
		t.Errorf("exact match lost to the fallback: %q", as)
	}
}

func TestClassOf(t *testing.T) {
	cases := map[string]string{
		`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\X","command":"O:10:\"App\\Jobs\\Y\":0:{}"},"attempts":0}`: `App\Jobs\X`,
		`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"command":"O:10:\"App\\Jobs\\Y\":0:{}"},"attempts":0}`:                              `App\Jobs\Y`,
		`{"job":"App\\Jobs\\Report@build","data":{"command":"x"},"attempts":0}`:                                                                         `App\Jobs\Report@build`,
		`{"job":"App\\Jobs\\Report","data":"","attempts":0}`:                                                                                            `App\Jobs\Report`,
	}
	for raw, want := range cases {
		env, err := payload.Parse([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		if got := laraq.ClassOf(env); got != want {
			t.Errorf("ClassOf(%s) = %s, want %s", raw, got, want)
		}
	}
}

func TestCommandAndBindErrors(t *testing.T) {
	enc := `{"uuid":"u","displayName":"App\\Jobs\\Secret","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\Secret","command":"eyJpdiI6IngiLCJ2YWx1ZSI6InkiLCJtYWMiOiJ6IiwidGFnIjoiIn0="},"id":"i","attempts":0}`
	job, err := laraqtest.NewJob([]byte(enc))
	if err != nil {
		t.Fatal(err)
	}
	_, err = job.Value()
	// Without an Encrypter, as CallQueuedHandler::getCommand() without one: an ordinary
	// exception of the attempt, retried by the job's tries.
	var xe *laraq.DecryptError
	if !errors.As(err, &xe) || err.Error() != "Unable to extract job payload." || xe.PHPClass() != "RuntimeException" || xe.Class != `App\Jobs\Secret` {
		t.Errorf("encrypted: %v", err)
	}
	if o, _ := laraq.OutcomeOf(err); o != laraq.OutcomeRetry {
		t.Errorf("an undecryptable command is retried as in PHP, got %v", o)
	}
	// Cached: the same error again.
	if _, err2 := job.Value(); err2 != err {
		t.Error("Value not cached")
	}

	sj, err := laraqtest.NewStringJob(`App\Jobs\Report@build`, map[string]int{"n": 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sj.Value(); err == nil {
		t.Error("a string job has a command")
	}
	var wrong struct{ N string }
	var de *laraq.DecodeError
	if err := sj.Bind(&wrong); !errors.As(err, &de) || de.Path != "data" {
		t.Errorf("bind string job data into the wrong type: %v", err)
	}
	var right struct{ N int }
	if err := sj.Bind(&right); err != nil || right.N != 1 {
		t.Errorf("bind: %v %+v", err, right)
	}
}

func TestCallRecoversPanics(t *testing.T) {
	job, _ := laraqtest.NewObjectJob(SendInvoice{InvoiceID: 1})
	jobs := laraq.NewJobs()
	jobs.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, job *laraq.JobInfo) error {
		var m map[string]int
		//lint:ignore SA5000 writing to a nil map is the panic under test
		m["x"] = 1
		return nil
	})
	_, err := jobs.Run(context.Background(), job)
	var pe *laraq.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("err %T %v", err, err)
	}
	s := pe.Exception.String()
	if !strings.HasPrefix(s, `Laraq\Panic: assignment to entry in nil map in `) || !strings.Contains(s, "TestCallRecoversPanics") {
		t.Errorf("exception:\n%s", s)
	}
	if o, _ := laraq.OutcomeOf(err); o != laraq.OutcomeRetry {
		t.Errorf("a panic is retried like an error, got %v", o)
	}
}
