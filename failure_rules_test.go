package laraq_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/payload"
)

func TestLaravelVersionChoosesExceptionTexts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		laravel     laraq.Release
		exceeded    string
		timedOutCls string
		timedOutMsg string
	}{
		{laraq.Release{}, `has been attempted too many times or run too long. The job may have previously timed out.`,
			`Illuminate\Queue\MaxAttemptsExceededException`, `has been attempted too many times or run too long. The job may have previously timed out.`},
		{laraq.Release{Major: 10, Minor: 9, Patch: 0}, `has been attempted too many times or run too long. The job may have previously timed out.`,
			`Illuminate\Queue\MaxAttemptsExceededException`, `has been attempted too many times or run too long. The job may have previously timed out.`},
		{laraq.Release{Major: 10, Minor: 10, Patch: 0}, `has been attempted too many times.`, laraq.TimeoutExceededClass, `has timed out.`},
		{laraq.Release{Major: 12, Minor: 0, Patch: 0}, `has been attempted too many times.`, laraq.TimeoutExceededClass, `has timed out.`},
	} {
		t.Run(tc.laravel.String(), func(t *testing.T) {
			t.Parallel()
			e := testkit.NewEnv(t)
			reg := laraq.NewJobs()
			reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
				<-ctx.Done()
				return ctx.Err()
			})
			cfg := e.Config(reg)
			cfg.Release = tc.laravel
			cfg.StopWhenEmpty = true
			exceeded := withAttempts(t, testkit.Job(t, testkit.SendInvoice{InvoiceID: 1}, nil), 1)
			timesOut := testkit.Job(t, testkit.SendInvoice{InvoiceID: 2}, func(j *payload.ObjectJob) {
				j.Timeout = new(int64(1))
				j.FailOnTimeout = true
				j.MaxTries = new(int64(5))
			})
			e.Push("default", exceeded, timesOut)
			e.RunToEnd(e.Consumer(cfg))
			recs := e.Store.All()
			if len(recs) != 2 {
				t.Fatalf("records %+v", recs)
			}
			for i, want := range []string{
				`Illuminate\Queue\MaxAttemptsExceededException: App\Jobs\SendInvoice ` + tc.exceeded + " in ",
				tc.timedOutCls + `: App\Jobs\SendInvoice ` + tc.timedOutMsg + " in ",
			} {
				if !strings.HasPrefix(recs[i].Exception, want) {
					t.Errorf("record %d: %q\nwant prefix %q", i, recs[i].Exception, want)
				}
			}
		})
	}
	if _, err := laraq.ParseRelease("5.7"); err == nil {
		t.Error("Laravel 5.7 accepted: it has no notify list")
	}
}

// PHP tests `$maxTries === 0`: a maxTries written as the string "0" is not unlimited,
// and attempt 1 <= "0" is false, so the job fails before running.
func TestMaxTriesZeroMustBeAnInt(t *testing.T) {
	e := testkit.NewEnv(t)
	ran := 0
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { ran++; return nil })
	cfg := e.Config(reg)
	cfg.StopWhenEmpty = true
	asInt := testkit.Job(t, testkit.SendInvoice{InvoiceID: 1}, func(j *payload.ObjectJob) { j.MaxTries = new(int64(0)) })
	asString := bytes.Replace(testkit.Job(t, testkit.SendInvoice{InvoiceID: 2}, func(j *payload.ObjectJob) { j.MaxTries = new(int64(0)) }),
		[]byte(`"maxTries":0,`), []byte(`"maxTries":"0",`), 1)
	e.Push("default", withAttempts(t, asInt, 4), asString)
	e.RunToEnd(e.Consumer(cfg))
	recs := e.Store.All()
	if ran != 1 || len(recs) != 1 || !bytes.Equal(recs[0].Payload, asString) ||
		!strings.HasPrefix(recs[0].Exception, `Illuminate\Queue\MaxAttemptsExceededException: `) {
		t.Fatalf("ran %d, records %+v", ran, recs)
	}
}

// PHP skips maxExceptions only when uuid is null: an empty uuid is counted (under
// "job-exceptions:").
func TestMaxExceptionsWithEmptyUUID(t *testing.T) {
	e := testkit.NewEnv(t)
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { return errors.New("flaky") })
	cfg := e.Config(reg)
	cfg.Tries = new(5)
	cfg.MaxJobs = 1
	p := testkit.Job(t, testkit.SendInvoice{}, func(j *payload.ObjectJob) { j.MaxExceptions = new(int64(1)) })
	env, _ := payload.Parse(p)
	p = bytes.Replace(p, []byte(`"uuid":"`+env.UUID+`"`), []byte(`"uuid":""`), 1)
	e.Push("default", p)
	if err := e.RunToEnd(e.Consumer(cfg)); !errors.Is(err, laraq.ErrMaxJobs) {
		t.Fatal(err)
	}
	if recs := e.Store.All(); len(recs) != 1 || !strings.Contains(recs[0].Exception, "flaky") {
		t.Fatalf("records %+v (maxExceptions 1 must fail on the first exception)", recs)
	}
}
