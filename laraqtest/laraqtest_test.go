package laraqtest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/laraqtest"
	"github.com/laraq/laraq/payload"
)

func TestNewObjectJobIsALaravelPayload(t *testing.T) {
	job, err := laraqtest.NewObjectJob(ResizeImage{Path: "p", Width: 3}, laraqtest.Attempt(4), laraqtest.Queue("img"),
		laraqtest.Connection("redis-2"), laraqtest.Meta(func(j *payload.ObjectJob) { j.MaxTries = new(int64(5)) }))
	if err != nil {
		t.Fatal(err)
	}
	if job.Attempt != 4 || job.Payload.Attempts != 3 || job.Queue != "img" || job.Connection != "redis-2" ||
		*job.Payload.MaxTries != 5 || job.UUID == "" || len(job.ID) != 32 || job.Name != `App\Jobs\ResizeImage` {
		t.Fatalf("%+v", job)
	}
	if !strings.HasSuffix(string(job.Raw), `"attempts":3}`) || payload.CheckPushRaw(job.Raw) != nil {
		t.Errorf("raw %s", job.Raw)
	}
}

func TestNewJobAttemptRewritesPayload(t *testing.T) {
	raw := []byte(`{"uuid":"u","job":"App\\Jobs\\R@run","data":{"a":"é/"},"id":"i","attempts":0}`)
	job, err := laraqtest.NewJob(raw, laraqtest.Attempt(3))
	if err != nil {
		t.Fatal(err)
	}
	if job.Attempt != 3 || string(job.Raw) != `{"uuid":"u","job":"App\\Jobs\\R@run","data":{"a":"é\/"},"id":"i","attempts":2}` {
		t.Errorf("%d %s", job.Attempt, job.Raw)
	}
	if _, err := laraqtest.NewJob([]byte(`{"attempts":0}`)); err == nil {
		t.Error("a payload without job accepted")
	}
	if _, err := laraqtest.NewJob([]byte(`{"job":`)); err == nil {
		t.Error("bad JSON accepted")
	}
}

func TestRunOutcomes(t *testing.T) {
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\R@run`, func(ctx context.Context, job *laraq.JobInfo) error { panic("boom") })
	job, err := laraqtest.NewStringJob(`App\Jobs\R@run`, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	res, err := laraqtest.Run(context.Background(), reg, job)
	if err != nil || res.Outcome != laraq.OutcomeRetry || !res.Panicked() || res.Class != `App\Jobs\R@run` {
		t.Errorf("%+v %v", res, err)
	}
	other, _ := laraqtest.NewStringJob(`App\Jobs\Other@run`, nil)
	var ue *laraq.UnhandledError
	if _, err := laraqtest.Run(context.Background(), reg, other); !errors.As(err, &ue) || ue.Class != `App\Jobs\Other@run` {
		t.Errorf("unhandled: %v", err)
	}
}
