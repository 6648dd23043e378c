package laraqtest_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/laraq/laraq/handlers"
	"github.com/laraq/laraq/laraqtest"
)

type ResizeImage struct {
	Path  string `php:"path"`
	Width int    `php:"width"`
}

func (ResizeImage) PHPClass() string { return `App\Jobs\ResizeImage` }

func Example() {
	reg := handlers.NewRegistry()
	handlers.Register(reg, `App\Jobs\ResizeImage`, func(ctx context.Context, cmd *ResizeImage, job *handlers.Job) error {
		if cmd.Width <= 0 {
			return handlers.Fail(errors.New("width must be positive"))
		}
		return nil
	})

	for _, cmd := range []ResizeImage{{Path: "a.png", Width: 200}, {Path: "b.png"}} {
		job, err := laraqtest.NewObjectJob(cmd, laraqtest.Queue("images"))
		if err != nil {
			panic(err)
		}
		res, err := laraqtest.Run(context.Background(), reg, job)
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
	fmt.Println(job.Class, job.Attempt, *job.Envelope.MaxTries, cmd.Path, cmd.Width)
	// Output:
	// App\Jobs\ResizeImage 2 3 c.png 640
}
