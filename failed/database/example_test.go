package database_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/laraq/laraq/failed/database"
)

func ExampleOpen() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "failed-example")
	defer os.RemoveAll(dir)

	// The app timezone, a fixed clock, and the failed_jobs table created as Laravel's
	// migration would (on an application's database, its migration creates it).
	tz, _ := time.LoadLocation("Europe/Paris")
	store, err := database.Open(ctx, "sqlite:"+filepath.Join(dir, "failed.sqlite"), database.Options{
		Location:    tz,
		CreateTable: database.CreateIfMissing,
		Now:         func() time.Time { return time.Date(2024, 7, 1, 12, 0, 0, 0, time.UTC) },
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
		fmt.Println(r.ID, r.Connection, r.Queue, r.FailedAt.Format(database.DateFormat))
	}
	ids, _ := store.Ids(ctx, "default") // what `queue:retry --queue=default` would retry
	fmt.Println(len(ids), "to retry")
	// Output:
	// logged 9f1c6a57-3f2e-4a0e-9d55-8d1c2b7f0a11
	// 9f1c6a57-3f2e-4a0e-9d55-8d1c2b7f0a11 redis default 2024-07-01 14:00:00
	// 1 to retry
}
