package metrics_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/laraq/laraq/metrics"
)

// A worker reports what it does with Observe; Handler serves the result.
func Example() {
	now := time.Unix(1_800_000_000, 0)
	m, err := metrics.New(metrics.Config{Now: func() time.Time { return now }})
	if err != nil {
		fmt.Println(err)
		return
	}
	m.Observe(metrics.Event{Kind: metrics.Loop})
	m.Observe(metrics.Event{Kind: metrics.Processing, Queue: "default", Class: `App\Jobs\SendWelcome`})
	m.Observe(metrics.Event{Kind: metrics.Processed, Queue: "default", Class: `App\Jobs\SendWelcome`, Duration: 40 * time.Millisecond})
	m.Observe(metrics.Event{Kind: metrics.Migrated, Queue: "default", From: "reserved", Count: 2})

	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if strings.HasPrefix(line, "laraq_jobs_processed_total") || strings.HasPrefix(line, "laraq_jobs_migrated_total") {
			fmt.Println(line)
		}
	}
	rec = httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	fmt.Print(rec.Code, " ", rec.Body.String())
	// Output:
	// laraq_jobs_migrated_total{from="reserved",queue="default"} 2
	// laraq_jobs_processed_total{class="App\\Jobs\\SendWelcome",queue="default"} 1
	// 200 {"healthy":true,"worker_loop_age_seconds":0,"redis_age_seconds":0}
}
