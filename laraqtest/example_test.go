package laraqtest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/laraqtest"
)

type ResizeImage struct {
	Path  string `php:"path"`
	Width int    `php:"width"`
}

func (ResizeImage) PHPClass() string { return `App\Jobs\ResizeImage` }

func Example() {
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[ResizeImage]) error {
		if job.Command.Width <= 0 {
			return laraq.Fail(errors.New("width must be positive"))
		}
		return nil
	})

	for _, cmd := range []ResizeImage{{Path: "a.png", Width: 200}, {Path: "b.png"}} {
		job, err := laraqtest.NewObjectJob(cmd, laraqtest.Queue("images"))
		if err != nil {
			panic(err)
		}
		res, err := laraqtest.Run(context.Background(), jobs, job)
		fmt.Println(cmd.Path, res.Outcome, res.Err, err)
	}
	// Output:
	// a.png done <nil> <nil>
	// b.png fail width must be positive <nil>
}

func ExampleNewJob() {
	// A payload as Laravel 8 stored it in Redis (or in failed_jobs.payload).
	raw := []byte(`{"uuid":"0e9b3c7e-3e07-4a6c-8c8e-1d1c7b1a2f10","displayName":"App\\Jobs\\ResizeImage","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":3,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null,"data":{"commandName":"App\\Jobs\\ResizeImage","command":"O:20:\"App\\Jobs\\ResizeImage\":2:{s:4:\"path\";s:5:\"c.png\";s:5:\"width\";i:640;}"},"id":"Yk2m0cW5nQ3sT8vZ1xR4pL7aB9dE6fG0","attempts":1}`)
	job, err := laraqtest.NewJob(raw)
	if err != nil {
		panic(err)
	}
	var cmd ResizeImage
	if err := job.Bind(&cmd); err != nil {
		panic(err)
	}
	fmt.Println(job.Class, job.Attempt, *job.Payload.MaxTries, cmd.Path, cmd.Width)
	// Output:
	// App\Jobs\ResizeImage 2 3 c.png 640
}
