package worker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpclass"
)

// uniqueMethodJob says what UniqueMethodJob's PHP methods return.
type uniqueMethodJob struct {
	OrderID any `php:"orderId,default=null"`
	job.Queueable
}

func (uniqueMethodJob) PHPClass() string               { return `App\Jobs\Classes\UniqueMethodJob` }
func (u uniqueMethodJob) UniqueID() string             { return fmt.Sprint("order-", u.OrderID) }
func (uniqueMethodJob) UniqueFor() time.Duration       { return 45 * time.Second }
func (uniqueMethodJob) ShouldBeUniqueUntilProcessing() {}

// TestUnnamedLocks: the classes named at start are the unique classes whose id comes
// from a uniqueId() method, that the worker handles without a Go type saying UniqueJob,
// on releases whose payloads do not name the lock (before 11.39, or unknown).
func TestUnnamedLocks(t *testing.T) {
	m, err := phpclass.Load(testenv.Testdata("phpclass", "manifest-L8.json"))
	if err != nil {
		t.Fatal(err)
	}
	rel := func(s string) job.Release {
		r, err := job.ParseRelease(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	untyped := job.NewJobs()
	untyped.Fallback(func(context.Context, *job.JobInfo) error { return nil })
	typed := job.NewJobs()
	job.Handle(typed, func(context.Context, *job.Job[uniqueMethodJob]) error { return nil })
	typed.Fallback(func(context.Context, *job.JobInfo) error { return nil })
	for _, c := range []struct {
		name string
		cfg  Config
		jobs *job.Jobs
		want string
	}{
		{"forward on 8.83", Config{Classes: m, JobRelease: rel("8.83")}, untyped, `[App\Jobs\Classes\UniqueMethodJob]`},
		{"release unknown", Config{Classes: m}, untyped, `[App\Jobs\Classes\UniqueMethodJob]`},
		{"11.39 names its locks", Config{Classes: m, JobRelease: rel("11.39")}, untyped, `[]`},
		{"a Go type says UniqueJob", Config{Classes: m, JobRelease: rel("8.83")}, typed, `[]`},
		{"not handled here", Config{Classes: m, JobRelease: rel("8.83")}, job.NewJobs(), `[]`},
		{"no facts", Config{JobRelease: rel("8.83")}, untyped, `[]`},
	} {
		if got := fmt.Sprint(unnamedLocks(&c.cfg, c.jobs)); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
