package consumer_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/alicebob/miniredis/v2"
	"github.com/laraq/laraq/consumer"
	"github.com/laraq/laraq/handlers"
	"github.com/laraq/laraq/producer"
	"github.com/redis/go-redis/v9"
)

// WelcomeEmail stands for the PHP job class App\Jobs\SendWelcomeEmail.
type WelcomeEmail struct {
	UserID int64 `php:"userId"`
	producer.Queueable
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

	// Laravel would have queued these with dispatch(new SendWelcomeEmail($user)).
	p, _ := producer.New(client, producer.Config{Prefix: "laravel_database_"})
	for _, id := range []int64{7, 8} {
		if _, err := p.Dispatch(ctx, WelcomeEmail{UserID: id}); err != nil {
			panic(err)
		}
	}

	reg := handlers.NewRegistry()
	handlers.Register(reg, `App\Jobs\SendWelcomeEmail`, func(ctx context.Context, cmd *WelcomeEmail, job *handlers.Job) error {
		fmt.Printf("welcome user %d (attempt %d on %s)\n", cmd.UserID, job.Attempt, job.Queue)
		return nil
	})
	c, err := consumer.New(client, consumer.Config{
		Prefix:        "laravel_database_",
		Registry:      reg,
		StopWhenEmpty: true, // like --stop-when-empty; a daemon runs until ctx is cancelled
		Logger:        slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	err = c.Run(ctx)
	fmt.Println(errors.Is(err, consumer.ErrQueueEmpty))
	// Output:
	// welcome user 7 (attempt 1 on default)
	// welcome user 8 (attempt 1 on default)
	// true
}

func ExampleConfig_events() {
	// OnEvent gets every step of every job, e.g. for queue:work's console lines or
	// metrics. It runs on the worker's goroutines: keep it short.
	cfg := consumer.Config{
		OnEvent: func(e consumer.Event) {
			switch e.Kind {
			case consumer.EventProcessed:
				fmt.Println("processed", e.Job.Name, "in", e.Runtime)
			case consumer.EventFailed:
				fmt.Println("failed", e.Job.Name, e.Err)
			case consumer.EventReleased:
				fmt.Println("released", e.Job.Name, "for", e.Delay)
			}
		},
	}
	cfg.OnEvent(consumer.Event{Kind: consumer.EventReleased, Job: &handlers.Job{Name: `App\Jobs\SendWelcomeEmail`}, Delay: 30e9})
	// Output: released App\Jobs\SendWelcomeEmail for 30s
}

// Invoice stands for App\Jobs\ChargeInvoice, SendReceipt for App\Jobs\SendReceipt.
type Invoice struct {
	ID int64 `php:"id"`
	producer.Queueable
}

func (Invoice) PHPClass() string { return `App\Jobs\ChargeInvoice` }

type SendReceipt struct {
	InvoiceID int64 `php:"invoiceId"`
	producer.Queueable
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

	// Bus::chain([new ChargeInvoice(42), new SendReceipt(42)])->dispatch() in Laravel.
	p, _ := producer.New(client, producer.Config{})
	if _, err := p.Dispatch(ctx, Invoice{ID: 42}, producer.Chain(SendReceipt{InvoiceID: 42})); err != nil {
		panic(err)
	}

	reg := handlers.NewRegistry()
	handlers.Register(reg, `App\Jobs\ChargeInvoice`, func(ctx context.Context, cmd *Invoice, job *handlers.Job) error {
		fmt.Println("charge invoice", cmd.ID)
		return nil // success: the worker dispatches SendReceipt, as Laravel's would
	})
	handlers.Register(reg, `App\Jobs\SendReceipt`, func(ctx context.Context, cmd *SendReceipt, job *handlers.Job) error {
		fmt.Println("send receipt for", cmd.InvoiceID, "- chain left:", len(cmd.Chained))
		return nil
	})
	c, _ := consumer.New(client, consumer.Config{Registry: reg, StopWhenEmpty: true, Logger: slog.New(slog.DiscardHandler)})
	_ = c.Run(ctx)
	// Output:
	// charge invoice 42
	// send receipt for 42 - chain left: 0
}
