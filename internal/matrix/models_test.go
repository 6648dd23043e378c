package matrix

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/laraqtest"
	"github.com/laraq/laraq/phpser"
)

// Go twins of jobs_matrix.php's missing-model jobs: the class defaults are declared as
// in PHP, which is where a worker of Laravel ≤12 reads deleteWhenMissingModels from.
type mmDeleted struct {
	DeleteWhenMissingModels bool                   `php:"deleteWhenMissingModels,default=true"`
	User                    phpser.ModelIdentifier `php:"user"`
	laraq.Queueable
}

func (mmDeleted) PHPClass() string { return `App\Jobs\Matrix\MissingModelJob` }

type mmKept struct {
	DeleteWhenMissingModels bool                   `php:"deleteWhenMissingModels,default=false"`
	User                    phpser.ModelIdentifier `php:"user"`
	laraq.Queueable
}

func (mmKept) PHPClass() string { return `App\Jobs\Matrix\KeptMissingModelJob` }

type mmNamed struct {
	DeleteWhenMissingModels bool                   `php:"deleteWhenMissingModels,default=true"`
	User                    phpser.ModelIdentifier `php:"user"`
	laraq.Queueable
}

func (mmNamed) PHPClass() string { return `App\Jobs\Matrix\NamedMissingModelJob` }

// missingUser is dispatch.php's form of a User model that the workers' database lacks.
const missingUser = `{"@class":"App\\Models\\User","exists":true,"\u0000*\u0000attributes":{"id":99,"name":"gone","email":"gone@example.com"},"\u0000*\u0000original":{"id":99,"name":"gone","email":"gone@example.com"}}`

// loadUser is a handler's model lookup: user 99 is gone.
func loadUser(m phpser.ModelIdentifier) error {
	if fmt.Sprint(m.ID) == "99" {
		return fmt.Errorf("loading the user: %w", laraq.MissingModel(m))
	}
	return nil
}

// TestMissingModelsMatrix: the same jobs whose model is gone go through each release's
// Worker and a laraq worker of that release, from the same payloads; both delete or fail
// the same jobs, with the same exception. 13.0+ reads the payload's flag, 12.x the class
// default of the queued class, ≤11.x that of the class the display name names (none for
// NamedMissingModelJob), and ≤10.0.0 fails such a job with the ReflectionException.
func TestMissingModelsMatrix(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		ctx := context.Background()
		peer := testenv.Peer(t, major)
		rel := testkit.PeerInfoRelease(t, peer)
		php, gos := testkit.NewSide(t, ctx, srv, "php", major), testkit.NewSide(t, ctx, srv, "go", major)
		penv := testenv.PHPEnv{Major: major, Redis: srv, Prefix: php.Prefix, FailedDB: php.DSN, Record: testkit.RecordFile(t)}
		var reqs []string
		for _, class := range []string{"MissingModelJob", "KeptMissingModelJob", "NamedMissingModelJob"} {
			reqs = append(reqs, `{"class":"App\\Jobs\\Matrix\\`+class+`","props":{"user":`+missingUser+`}}`)
		}
		penv.Dispatch(t, nil, reqs...)
		testkit.CopyQueueKeys(t, ctx, php, gos)

		testkit.RunWorker(t, penv, time.Minute, "--stop-when-empty", "--sleep=0", "--tries=3")
		jobs := laraq.NewJobs()
		if rel.AtLeast(13, 0, 0) {
			// From 13.0 the payload decides: an untyped handler, with no class default
			// to read, still deletes the job.
			jobs.HandleFunc(mmDeleted{}.PHPClass(), func(ctx context.Context, j *laraq.JobInfo) error {
				var cmd struct {
					User phpser.ModelIdentifier `php:"user"`
				}
				if err := j.Bind(&cmd); err != nil {
					return err
				}
				return loadUser(cmd.User)
			})
		} else {
			laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[mmDeleted]) error { return loadUser(j.Command.User) })
		}
		laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[mmKept]) error { return loadUser(j.Command.User) })
		laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[mmNamed]) error { return loadUser(j.Command.User) })
		w, err := testkit.NewWorker(gos.Queue, testkit.Setup{Prefix: gos.Prefix, Registry: jobs, Failed: gos.Store, Release: rel,
			Tries: new(3), StopWhenEmpty: true, Sleep: -1, Cache: testkit.PeerCache(gos.Cache, peer), Logger: testkit.QuietLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
			t.Fatal(err)
		}

		got, want := gos.EndState(t, ctx), php.EndState(t, ctx)
		if diff, same := testkit.SideBySide(want, got); !same {
			t.Fatalf("Laravel %s and laraq end differently:\n%s", peer.Tag, diff)
		}
		kept := `failed App\Jobs\Matrix\KeptMissingModelJob: Illuminate\Database\Eloquent\ModelNotFoundException: No query results for model [App\Models\User].`
		named := `failed App\Jobs\Matrix\NamedMissingModelJob: Illuminate\Database\Eloquent\ModelNotFoundException: No query results for model [App\Models\User].`
		expect := []string{kept}
		switch {
		case !rel.AtLeast(10, 0, 1):
			expect = append(expect, `failed App\Jobs\Matrix\NamedMissingModelJob: ReflectionException: Class "Named missing model" does not exist`)
		case !rel.AtLeast(12, 0, 0):
			expect = append(expect, named)
		}
		slices.Sort(expect)
		if !slices.Equal(got, expect) {
			t.Fatalf("Laravel %s: both end with\n  %q\nwant\n  %q", peer.Tag, got, expect)
		}
	})
}

// A missing model is neither retried nor an ordinary exception: laraqtest reports the
// outcome, and the model's class is in the message.
func TestMissingModelOutcome(t *testing.T) {
	err := loadUser(phpser.ModelIdentifier{Class: `App\Models\User`, ID: int64(99)})
	if out, _ := laraq.OutcomeOf(err); out != laraq.OutcomeMissingModel || !errors.Is(err, laraq.ErrModelNotFound) {
		t.Fatalf("OutcomeOf = %v, errors.Is = %v", out, errors.Is(err, laraq.ErrModelNotFound))
	}
	if out, _ := laraq.OutcomeOf(laraq.Fail(err)); out != laraq.OutcomeFail {
		t.Fatalf("Fail(missing model) = %v, want fail", out)
	}
	if errors.Is(errors.New("x"), laraq.ErrModelNotFound) {
		t.Fatal("any error is a missing model")
	}
	m := &laraq.ModelNotFound{Model: `App\Models\Order`, IDs: []any{int64(3), "a-b", 1.5}}
	if got := m.Error(); got != `No query results for model [App\Models\Order] 3, a-b, 1.5` {
		t.Fatalf("message %q", got)
	}
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[mmKept]) error { return loadUser(j.Command.User) })
	info, err := laraqtest.NewObjectJob(mmKept{User: phpser.ModelIdentifier{Class: `App\Models\User`, ID: int64(99)}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := laraqtest.Run(context.Background(), jobs, info)
	if err != nil || res.Outcome != laraq.OutcomeMissingModel {
		t.Fatalf("laraqtest: %+v, %v", res, err)
	}
}
