package failed_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/laraq/laraq/failed"
)

func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "failed-example")
	defer os.RemoveAll(dir)

	// The app timezone and a fixed clock; SQLite creates the failed_jobs table itself.
	tz, _ := time.LoadLocation("Europe/Paris")
	store, err := failed.Open(ctx, "sqlite:"+filepath.Join(dir, "failed.sqlite"), failed.Options{
		Location: tz,
		Now:      func() time.Time { return time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	payload := []byte(`{"uuid":"9f1c6a57-3f2e-4a0e-9d55-8d1c2b7f0a11","displayName":"App\\Jobs\\SendInvoice","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\SendInvoice","command":"O:20:\"App\\Jobs\\SendInvoice\":0:{}"},"attempts":0}`)
	id, err := store.Log(ctx, "redis", "default", payload, "RuntimeException: SMTP down in /app/mail.go:12\nStack trace:\n#0 {main}")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("logged", id)

	records, _ := store.All(ctx)
	for _, r := range records {
		fmt.Println(r.ID, r.Connection, r.Queue, r.FailedAt.Format(failed.DateFormat))
	}
	ids, _ := store.Ids(ctx, "default") // what `queue:retry --queue=default` would retry
	fmt.Println(len(ids), "to retry")
	// Output:
	// logged 9f1c6a57-3f2e-4a0e-9d55-8d1c2b7f0a11
	// 9f1c6a57-3f2e-4a0e-9d55-8d1c2b7f0a11 redis default 2024-07-01 14:00:00
	// 1 to retry
}

func ExampleException_String() {
	ex := &failed.Exception{
		Class:   `App\Exceptions\CardDeclined`,
		Message: "card declined",
		File:    "/app/billing/charge.go",
		Line:    88,
		Trace: []failed.Frame{
			{File: "/app/worker.go", Line: 120, Function: "example.com/app/billing.Charge"},
			{Function: "example.com/app/worker.run"},
		},
	}
	fmt.Println(ex.String())
	// Output:
	// App\Exceptions\CardDeclined: card declined in /app/billing/charge.go:88
	// Stack trace:
	// #0 /app/worker.go(120): example.com/app/billing.Charge()
	// #1 [internal function]: example.com/app/worker.run()
	// #2 {main}
}

func ExampleCapture() {
	errDeclined := errors.New("card declined")
	err := fmt.Errorf("charge order 7: %w", errDeclined)

	text := failed.Capture(err, 0).String()
	// Wrapped errors print innermost first, each later one after "Next", as PHP prints
	// previous exceptions.
	for _, line := range strings.Split(text, "\n") {
		if head, _, ok := strings.Cut(line, " in "); ok && !strings.HasPrefix(line, "#") {
			fmt.Println(head)
		}
	}
	// Output:
	// errors\errorString: card declined
	// Next fmt\wrapError: charge order 7: card declined
}

func ExampleNew() {
	ex := failed.New(failed.MaxAttemptsExceededClass, failed.MaxAttemptsExceededMessage(`App\Jobs\SendInvoice`), 0)
	fmt.Println(ex.Class)
	fmt.Println(ex.Message)
	// Output:
	// Illuminate\Queue\MaxAttemptsExceededException
	// App\Jobs\SendInvoice has been attempted too many times or run too long. The job may have previously timed out.
}

func ExampleFromPanic() {
	run := func() (ex *failed.Exception) {
		defer func() {
			if v := recover(); v != nil {
				ex = failed.FromPanic(v)
			}
		}()
		var limits map[string]int
		//lint:ignore SA5000 the panic is what this example shows
		limits["x"] = 1
		return nil
	}
	ex := run()
	fmt.Println(ex.Class+":", ex.Message)
	fmt.Println(filepath.Base(ex.File))
	// Output:
	// Laraq\Panic: assignment to entry in nil map
	// example_test.go
}

func ExampleNewNull() {
	store := failed.NewNull() // the "null" failed driver: nothing is kept
	id, err := store.Log(context.Background(), "redis", "default", []byte(`{"uuid":"x"}`), "E")
	fmt.Printf("%q %v\n", id, err)
	// Output:
	// "" <nil>
}
