package laraq_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/laraq/laraq"
)

type typesJob struct {
	N int `php:"n"`
}

func (typesJob) PHPClass() string { return `App\Jobs\TypesJob` }

type typesDeclared struct{}

func (typesDeclared) PHPClass() string { return `App\Jobs\TypesDeclared` }

func TestJobsTypes(t *testing.T) {
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(context.Context, *laraq.Job[typesJob]) error { return nil })
	laraq.Declare[typesDeclared](jobs)
	jobs.HandleFunc(`App\Jobs\Untyped`, func(context.Context, *laraq.JobInfo) error { return nil })
	got := jobs.Types()
	want := map[string]reflect.Type{`App\Jobs\TypesJob`: reflect.TypeFor[typesJob](), `App\Jobs\TypesDeclared`: reflect.TypeFor[typesDeclared]()}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Types() = %v, want %v", got, want)
	}
	got[`App\Jobs\X`] = nil
	if len(jobs.Types()) != 2 {
		t.Error("Types() is not a copy")
	}
}
