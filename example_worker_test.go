package laraq_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/laraq/laraq"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// WelcomeEmail stands for the PHP job class App\Jobs\SendWelcomeEmail.
type WelcomeEmail struct {
	UserID int64 `php:"userId"`
	laraq.Queueable
}

func (WelcomeEmail) PHPClass() string { return `App\Jobs\SendWelcomeEmail` }

func Example() {
	// An in-memory Redis for the example; use your Laravel app's Redis.
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	ctx := context.Background()

	// The Laravel application's queue connection (laravel.Connect reads it from its .env).
	conn := &laraq.Connection{Client: client, Prefix: "laravel_database_", Release: laraq.Release{Major: 11, Minor: 40}}

	// Laravel would have queued these with dispatch(new SendWelcomeEmail($user)).
	d, _ := laraq.NewDispatcher(conn)
	for _, id := range []int64{7, 8} {
		if _, err := d.Dispatch(ctx, WelcomeEmail{UserID: id}); err != nil {
			panic(err)
		}
	}

	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[WelcomeEmail]) error {
		fmt.Printf("welcome user %d (attempt %d on %s)\n", job.Command.UserID, job.Attempt, job.Queue)
		return nil
	})
	w, err := laraq.NewWorker(conn, jobs, laraq.WorkerConfig{
		StopWhenEmpty: true, // like --stop-when-empty; a daemon runs until ctx is cancelled
		Logger:        slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	err = w.Run(ctx)
	fmt.Println(errors.Is(err, laraq.ErrQueueEmpty))
	// Output:
	// welcome user 7 (attempt 1 on default)
	// welcome user 8 (attempt 1 on default)
	// true
}

func ExampleWorkerConfig_events() {
	// OnEvent gets every step of every job, e.g. for queue:work's console lines or
	// metrics. It runs on the worker's goroutines: keep it short.
	cfg := laraq.WorkerConfig{
		OnEvent: func(e laraq.Event) {
			switch e.Kind {
			case laraq.EventProcessed:
				fmt.Println("processed", e.Job.Name, "in", e.Runtime)
			case laraq.EventFailed:
				fmt.Println("failed", e.Job.Name, e.Err)
			case laraq.EventReleased:
				fmt.Println("released", e.Job.Name, "for", e.Delay)
			}
		},
	}
	cfg.OnEvent(laraq.Event{Kind: laraq.EventReleased, Job: &laraq.JobInfo{Name: `App\Jobs\SendWelcomeEmail`}, Delay: 30e9})
	// Output: released App\Jobs\SendWelcomeEmail for 30s
}

// Invoice stands for App\Jobs\ChargeInvoice, SendReceipt for App\Jobs\SendReceipt.
type Invoice struct {
	ID int64 `php:"id"`
	laraq.Queueable
}

func (Invoice) PHPClass() string { return `App\Jobs\ChargeInvoice` }

type SendReceipt struct {
	InvoiceID int64 `php:"invoiceId"`
	laraq.Queueable
}

func (SendReceipt) PHPClass() string { return `App\Jobs\SendReceipt` }

func Example_chain() {
	mr := miniredis.NewMiniRedis()
	if err := mr.Start(); err != nil {
		panic(err)
	}
	defer mr.Close()
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer client.Close()
	ctx := context.Background()

	conn := &laraq.Connection{Client: client, Release: laraq.Release{Major: 8, Minor: 83}}

	// Bus::chain([new ChargeInvoice(42), new SendReceipt(42)])->dispatch() in Laravel.
	d, _ := laraq.NewDispatcher(conn)
	if _, err := d.Dispatch(ctx, Invoice{ID: 42}, laraq.Chain(SendReceipt{InvoiceID: 42})); err != nil {
		panic(err)
	}

	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[Invoice]) error {
		fmt.Println("charge invoice", job.Command.ID)
		return nil // success: the worker dispatches SendReceipt, as Laravel's would
	})
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[SendReceipt]) error {
		fmt.Println("send receipt for", job.Command.InvoiceID, "- chain left:", len(job.Command.Chained))
		return nil
	})
	w, _ := laraq.NewWorker(conn, jobs, laraq.WorkerConfig{StopWhenEmpty: true, Logger: slog.New(slog.DiscardHandler)})
	_ = w.Run(ctx)
	// Output:
	// charge invoice 42
	// send receipt for 42 - chain left: 0
}
