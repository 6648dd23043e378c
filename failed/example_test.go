package failed_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/laraq/laraq/failed"
)

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
