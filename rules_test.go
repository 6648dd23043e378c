package laraq_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/payload"
)

const maxAttemptsMsg = `App\Jobs\SendInvoice has been attempted too many times or run too long. The job may have previously timed out.`

// attemptsOf reads attempts from a payload.
func attemptsOf(t testing.TB, p []byte) int64 {
	t.Helper()
	env, err := payload.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	return env.Attempts
}

func TestSuccessDeletesTheReservedCopy(t *testing.T) {
	e := testkit.NewEnv(t)
	var mu sync.Mutex
	var got []*laraq.JobInfo
	var ids []int64
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\SendInvoice`, func(ctx context.Context, cmd *testkit.SendInvoice, job *laraq.JobInfo) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, job)
		ids = append(ids, cmd.InvoiceID)
		return nil
	})
	var pushed [][]byte
	for i := range 3 {
		p := testkit.Job(t, testkit.SendInvoice{InvoiceID: int64(100 + i), Note: "n"}, nil)
		pushed = append(pushed, p)
		e.Push("default", p)
	}
	cfg := e.Config(reg)
	cfg.StopWhenEmpty = true
	if err := e.RunToEnd(e.Consumer(cfg)); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatalf("Run = %v, want ErrQueueEmpty", err)
	}
	if fmt.Sprint(ids) != "[100 101 102]" {
		t.Errorf("handled %v", ids)
	}
	for i, j := range got {
		env, _ := payload.Parse(pushed[i])
		if !bytes.Equal(j.Raw, pushed[i]) || j.Attempt != 1 || j.Queue != "default" || j.Connection != "redis" ||
			j.UUID != env.UUID || j.ID != env.ID || j.Name != `App\Jobs\SendInvoice` || j.Class != `App\Jobs\SendInvoice` {
			t.Errorf("job %d: %+v", i, j)
		}
		if attemptsOf(t, j.Reserved) != 1 {
			t.Errorf("reserved copy %s", j.Reserved)
		}
	}
	if k := e.Keys(); len(k) != 0 {
		t.Errorf("keys left: %v", k)
	}
	if len(e.Store.All()) != 0 {
		t.Errorf("failed records: %v", e.Store.All())
	}
}

func TestRetryFollowsTriesAndBackoff(t *testing.T) {
	e := testkit.NewEnv(t)
	var attempts []int
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
		attempts = append(attempts, j.Attempt)
		return errors.New("smtp down")
	})
	cfg := e.Config(reg)
	cfg.Tries = new(3)
	cfg.Backoff = []int{5, 10}
	cfg.StopWhenEmpty = true
	ev := &events{}
	cfg.OnEvent = ev.add
	e.Push("default", testkit.Job(t, testkit.SendInvoice{InvoiceID: 1}, nil))

	t0 := e.Clock.Now().Unix()
	e.RunToEnd(e.Consumer(cfg))
	z := e.ZSet("queues:default:delayed")
	if len(z) != 1 || int64(z[0].Score) != t0+5 || attemptsOf(t, []byte(z[0].Member.(string))) != 1 {
		t.Fatalf("after attempt 1: delayed %v", z)
	}
	e.Clock.Add(5 * time.Second)
	e.RunToEnd(e.Consumer(cfg))
	z = e.ZSet("queues:default:delayed")
	if len(z) != 1 || int64(z[0].Score) != t0+5+10 {
		t.Fatalf("after attempt 2: delayed %v", z)
	}
	popped3 := []byte(z[0].Member.(string))
	e.Clock.Add(10 * time.Second)
	e.RunToEnd(e.Consumer(cfg))

	if fmt.Sprint(attempts) != "[1 2 3]" {
		t.Errorf("attempts %v", attempts)
	}
	recs := e.Store.All()
	if len(recs) != 1 {
		t.Fatalf("failed records %d", len(recs))
	}
	r := recs[0]
	// The record holds the payload as popped for the failing attempt: the re-encoded copy
	// released after attempt 2 (attempts 2), byte for byte.
	if !bytes.Equal(r.Payload, popped3) || r.Connection != "redis" || r.Queue != "default" {
		t.Errorf("record %q %q %s", r.Connection, r.Queue, r.Payload)
	}
	if !strings.HasPrefix(r.Exception, "errors\\errorString: smtp down in ") && !strings.Contains(r.Exception, ": smtp down in ") {
		t.Errorf("exception %q", r.Exception)
	}
	if !strings.Contains(r.Exception, "Stack trace:\n#0 ") {
		t.Errorf("exception without trace: %q", r.Exception)
	}
	if k := e.Keys(); len(k) != 0 {
		t.Errorf("keys left: %v", k)
	}
	if got := strings.Join(ev.kinds(), ","); got != "processing,exception,released,processing,exception,released,processing,failed,exception" {
		t.Errorf("events %s", got)
	}
}

// withAttempts rewrites the attempts of a Go-built payload (it always ends with
// "attempts":0}).
func withAttempts(t testing.TB, p []byte, n int) []byte {
	t.Helper()
	if !bytes.HasSuffix(p, []byte(`"attempts":0}`)) {
		t.Fatalf("payload does not end with attempts: %s", p)
	}
	return append(bytes.TrimSuffix(p, []byte(`0}`)), []byte(fmt.Sprintf("%d}", n))...)
}

func TestAlreadyExceededFailsBeforeRunning(t *testing.T) {
	cases := []struct {
		name      string
		tries     *int
		mod       func(*payload.ObjectJob)
		attempts  int
		wantFail  bool
		clockDiff int64 // retryUntil relative to now
	}{
		{name: "worker tries 1, second attempt", tries: nil, attempts: 1, wantFail: true},
		{name: "worker tries 1, first attempt", tries: nil, attempts: 0},
		{name: "unlimited tries", tries: new(0), attempts: 50},
		{name: "payload maxTries overrides worker", tries: new(0), attempts: 3, wantFail: true,
			mod: func(j *payload.ObjectJob) { j.MaxTries = new(int64(3)) }},
		{name: "payload maxTries 0 is unlimited", tries: new(2), attempts: 9,
			mod: func(j *payload.ObjectJob) { j.MaxTries = new(int64(0)) }},
		{name: "retryUntil in the future beats tries", tries: new(1), attempts: 7, clockDiff: 60},
		{name: "retryUntil now still runs", tries: new(1), attempts: 7, clockDiff: 0},
		{name: "retryUntil passed fails with unlimited tries", tries: new(0), attempts: 0, clockDiff: -1, wantFail: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := testkit.NewEnv(t)
			ran := 0
			reg := laraq.NewJobs()
			reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { ran++; return nil })
			cfg := e.Config(reg)
			cfg.Tries = tc.tries
			cfg.StopWhenEmpty = true
			mod := tc.mod
			if tc.clockDiff != 0 || strings.Contains(tc.name, "retryUntil") {
				until := e.Clock.Now().Unix() + tc.clockDiff
				mod = func(j *payload.ObjectJob) { j.RetryUntil = &until }
			}
			p := withAttempts(t, testkit.Job(t, testkit.SendInvoice{InvoiceID: 1}, mod), tc.attempts)
			e.Push("default", p)
			e.RunToEnd(e.Consumer(cfg))
			recs := e.Store.All()
			if tc.wantFail {
				if ran != 0 || len(recs) != 1 {
					t.Fatalf("ran %d, records %d", ran, len(recs))
				}
				if !strings.HasPrefix(recs[0].Exception, `Illuminate\Queue\MaxAttemptsExceededException: `+maxAttemptsMsg+" in ") {
					t.Errorf("exception %q", recs[0].Exception)
				}
				if !bytes.Equal(recs[0].Payload, p) {
					t.Errorf("payload %s", recs[0].Payload)
				}
			} else if ran != 1 || len(recs) != 0 {
				t.Fatalf("ran %d, records %d", ran, len(recs))
			}
			if k := e.Keys(); len(k) != 0 {
				t.Errorf("keys left: %v", k)
			}
		})
	}
}

func TestRetryUntilDecidesAfterAnError(t *testing.T) {
	e := testkit.NewEnv(t)
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
		e.Clock.Add(10 * time.Second) // the handler ran past retryUntil
		return errors.New("boom")
	})
	cfg := e.Config(reg)
	cfg.Tries = new(100)
	cfg.StopWhenEmpty = true
	until := e.Clock.Now().Unix() + 5
	e.Push("default", testkit.Job(t, testkit.SendInvoice{}, func(j *payload.ObjectJob) { j.RetryUntil = &until }))
	e.RunToEnd(e.Consumer(cfg))
	if recs := e.Store.All(); len(recs) != 1 || !strings.Contains(recs[0].Exception, ": boom in ") {
		t.Fatalf("records %+v", recs)
	}
}

func TestMaxExceptionsSharesLaravelsCounter(t *testing.T) {
	e := testkit.NewEnv(t)
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { return errors.New("flaky") })
	cfg := e.Config(reg)
	cfg.Tries = new(0)
	cfg.StopWhenEmpty = true
	p := testkit.Job(t, testkit.SendInvoice{}, func(j *payload.ObjectJob) { j.MaxExceptions = new(int64(2)) })
	env, _ := payload.Parse(p)
	e.Push("default", p)
	e.RunToEnd(e.Consumer(cfg))
	counter := e.Prefix + "job-exceptions:" + env.UUID
	if v, err := e.Client.Get(e.Ctx, counter).Result(); err != nil || v != "1" {
		t.Fatalf("counter after one exception = %q, %v", v, err)
	}
	if ttl := e.Client.TTL(e.Ctx, counter).Val(); ttl <= 0 || ttl > 24*time.Hour {
		t.Errorf("counter ttl %v", ttl)
	}
	if len(e.Store.All()) != 0 {
		t.Fatal("failed after one exception")
	}
	e.RunToEnd(e.Consumer(cfg)) // released with backoff 0: due now
	if recs := e.Store.All(); len(recs) != 1 {
		t.Fatalf("records after two exceptions: %d", len(recs))
	}
	if k := e.Keys(); len(k) != 0 {
		t.Errorf("keys left (counter must be forgotten): %v", k)
	}
}

func TestBackoffSources(t *testing.T) {
	cases := []struct {
		name     string
		workerBO []int
		mod      func(*payload.ObjectJob)
		attempts int
		want     int64
	}{
		{"worker default 0", nil, nil, 0, 0},
		{"worker list, attempt 2", []int{1, 7, 30}, nil, 1, 7},
		{"worker list, past the end", []int{1, 7}, nil, 5, 7},
		{"payload backoff wins", []int{99}, func(j *payload.ObjectJob) { j.Backoff = new("3,4") }, 1, 4},
		{"payload single backoff", nil, func(j *payload.ObjectJob) { j.Backoff = new("12") }, 3, 12},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := testkit.NewEnv(t)
			reg := laraq.NewJobs()
			reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { return errors.New("x") })
			cfg := e.Config(reg)
			cfg.Tries = new(0)
			cfg.Backoff = tc.workerBO
			cfg.StopWhenEmpty = true
			e.Push("default", withAttempts(t, testkit.Job(t, testkit.SendInvoice{}, tc.mod), tc.attempts))
			e.RunToEnd(e.Consumer(cfg))
			z := e.ZSet("queues:default:delayed")
			if len(z) != 1 || int64(z[0].Score) != e.Clock.Now().Unix()+tc.want {
				t.Fatalf("delayed %v, want score now+%d", z, tc.want)
			}
		})
	}
}

func TestHandlerOutcomes(t *testing.T) {
	cases := []struct {
		name       string
		ret        func() error
		wantDelay  int64 // -1: not delayed
		wantFailed string
		wantEvents string
	}{
		{"release", func() error { return laraq.ReleaseAfter(1500 * time.Millisecond) }, 2, "", "processing,released,processed"},
		// $this->fail() in handle() returns normally: PHP fires JobFailed, then JobProcessed.
		{"fail", func() error { return laraq.Fail(errors.New("card declined")) }, -1, ": card declined in ", "processing,failed,processed"},
		{"fail without cause", func() error { return laraq.Fail(nil) }, -1, `Illuminate\Queue\ManuallyFailedException in `, "processing,failed,processed"},
		{"delete", func() error { return laraq.Delete() }, -1, "", "processing,processed"},
		{"panic", func() error { panic("nil pointer in billing") }, -1, `Laraq\Panic: nil pointer in billing in `, "processing,failed,exception"},
		{"wrapped release", func() error { return fmt.Errorf("throttled: %w", laraq.ReleaseAfter(time.Minute)) }, 60, "", "processing,released,processed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := testkit.NewEnv(t)
			reg := laraq.NewJobs()
			reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { return tc.ret() })
			cfg := e.Config(reg)
			cfg.StopWhenEmpty = true
			ev := &events{}
			cfg.OnEvent = ev.add
			p := testkit.Job(t, testkit.SendInvoice{}, nil)
			e.Push("default", p)
			e.RunToEnd(e.Consumer(cfg))
			z := e.ZSet("queues:default:delayed")
			switch {
			case tc.wantDelay < 0 && len(z) != 0:
				t.Errorf("delayed %v", z)
			case tc.wantDelay >= 0 && (len(z) != 1 || int64(z[0].Score) != e.Clock.Now().Unix()+tc.wantDelay ||
				attemptsOf(t, []byte(z[0].Member.(string))) != 1):
				t.Errorf("delayed %v, want one at now+%d with attempts 1", z, tc.wantDelay)
			}
			recs := e.Store.All()
			if tc.wantFailed == "" && len(recs) != 0 || tc.wantFailed != "" && (len(recs) != 1 || !strings.Contains(recs[0].Exception, tc.wantFailed)) {
				t.Errorf("records %+v", recs)
			}
			if tc.name == "panic" && (!strings.Contains(recs[0].Exception, "TestHandlerOutcomes") || !strings.Contains(recs[0].Exception, "Stack trace:")) {
				t.Errorf("panic record without the panicking function: %s", recs[0].Exception)
			}
			if got := strings.Join(ev.kinds(), ","); got != tc.wantEvents {
				t.Errorf("events %s, want %s", got, tc.wantEvents)
			}
			if len(e.List("queues:default")) != 0 || len(e.ZSet("queues:default:reserved")) != 0 {
				t.Errorf("job left ready or reserved: %v", e.Keys())
			}
		})
	}
}

func TestUndecodableCommandIsFailedNotLost(t *testing.T) {
	e := testkit.NewEnv(t)
	called := false
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\SendInvoice`, func(ctx context.Context, cmd *testkit.SendInvoice, job *laraq.JobInfo) error {
		called = true
		return nil
	})
	cfg := e.Config(reg)
	cfg.Tries = new(5)
	cfg.StopWhenEmpty = true
	// A command cut short, and one whose property has the wrong type.
	bad := testkit.Job(t, testkit.SendInvoice{}, func(j *payload.ObjectJob) { j.Command = `O:20:"App\Jobs\SendInvoice":1:{s:9:"invoiceId";i:5}` })
	wrong := testkit.Job(t, testkit.SendInvoice{}, func(j *payload.ObjectJob) {
		j.Command = `O:20:"App\Jobs\SendInvoice":1:{s:9:"invoiceId";s:3:"abc";}`
	})
	e.Push("default", bad, wrong)
	e.RunToEnd(e.Consumer(cfg))
	if called {
		t.Error("handler called for an undecodable command")
	}
	recs := e.Store.All()
	if len(recs) != 2 {
		t.Fatalf("records %d", len(recs))
	}
	want0 := `decode data.command of App\Jobs\SendInvoice: phpser: expected ';', found '}' at offset 50`
	if !strings.Contains(recs[0].Exception, want0) || !bytes.Equal(recs[0].Payload, bad) {
		t.Errorf("record 0: %s", recs[0].Exception)
	}
	if !strings.Contains(recs[1].Exception, `decode data.command of App\Jobs\SendInvoice: phpser: cannot unmarshal PHP string into Go int64`) {
		t.Errorf("record 1: %s", recs[1].Exception)
	}
	if k := e.Keys(); len(k) != 0 {
		t.Errorf("keys left: %v", k)
	}
}

func TestUnreadablePayloads(t *testing.T) {
	e := testkit.NewEnv(t)
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { return nil })
	cfg := e.Config(reg)
	cfg.StopWhenEmpty = true
	ev := &events{}
	cfg.OnEvent = ev.add
	noAttempts := []byte(`{"uuid":"u1","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{}}`)
	boolJob := []byte(`{"uuid":"u2","job":true,"data":{},"attempts":0}`)
	noCommand := []byte(`{"uuid":"u3","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\SendInvoice"},"attempts":0}`)
	e.Push("default", noAttempts, boolJob, noCommand)
	e.RunToEnd(e.Consumer(cfg))

	if inv := e.List("queues:default:invalid"); len(inv) != 1 || inv[0] != string(noAttempts) {
		t.Errorf("invalid list %q", inv)
	}
	if ev.count(laraq.EventInvalid) != 1 {
		t.Errorf("events %v", ev.kinds())
	}
	recs := e.Store.All()
	if len(recs) != 2 {
		t.Fatalf("records %+v", recs)
	}
	for i, r := range recs {
		if !strings.Contains(r.Exception, "unreadable job payload: payload") {
			t.Errorf("record %d: %s", i, r.Exception)
		}
	}
	if !bytes.Equal(recs[0].Payload, boolJob) || !bytes.Equal(recs[1].Payload, noCommand) {
		t.Errorf("payloads %s / %s", recs[0].Payload, recs[1].Payload)
	}
	if k := e.Keys(); fmt.Sprint(k) != "[queues:default:invalid]" {
		t.Errorf("keys %v", k)
	}
}

func TestUnhandledPolicies(t *testing.T) {
	t.Run("fail", func(t *testing.T) {
		e := testkit.NewEnv(t)
		cfg := e.Config(laraq.NewJobs())
		cfg.StopWhenEmpty = true
		p := testkit.Job(t, otherJob{}, nil)
		e.Push("default", p)
		e.RunToEnd(e.Consumer(cfg))
		recs := e.Store.All()
		if len(recs) != 1 || !bytes.Equal(recs[0].Payload, p) ||
			!strings.HasPrefix(recs[0].Exception, `Laraq\UnhandledJob: no handler is registered for App\Jobs\Other in this Go worker in `) {
			t.Fatalf("records %+v", recs)
		}
		if k := e.Keys(); len(k) != 0 {
			t.Errorf("keys %v", k)
		}
	})
	t.Run("fail without a failed store releases", func(t *testing.T) {
		e := testkit.NewEnv(t)
		cfg := e.Config(laraq.NewJobs())
		cfg.Failed = nil
		cfg.StopWhenEmpty = true
		e.Push("default", testkit.Job(t, otherJob{}, nil))
		bad := testkit.Job(t, testkit.SendInvoice{}, func(j *payload.ObjectJob) { j.Command = "O:3:" })
		e.Push("other", bad)
		cfg.Queues = []string{"default", "other"}
		reg := laraq.NewJobs()
		testkit.Register(reg, `App\Jobs\SendInvoice`, func(ctx context.Context, cmd *testkit.SendInvoice, job *laraq.JobInfo) error { return nil })
		cfg.Registry = reg
		e.RunToEnd(e.Consumer(cfg))
		z := e.ZSet("queues:default:delayed")
		if len(z) != 1 || int64(z[0].Score) != e.Clock.Now().Unix()+int64(laraq.DefaultUnhandledDelay/time.Second) {
			t.Fatalf("delayed %v", z)
		}
		if !strings.Contains(e.Logs.String(), base64.StdEncoding.EncodeToString(bad)) {
			t.Errorf("undecodable job not logged:\n%s", e.Logs.String())
		}
	})
	t.Run("release", func(t *testing.T) {
		e := testkit.NewEnv(t)
		cfg := e.Config(laraq.NewJobs())
		cfg.StopWhenEmpty = true
		cfg.Unhandled = laraq.UnhandledPolicy{Action: laraq.ReleaseUnhandled, Delay: 30 * time.Second}
		e.Push("default", testkit.Job(t, otherJob{}, nil))
		e.RunToEnd(e.Consumer(cfg))
		z := e.ZSet("queues:default:delayed")
		if len(z) != 1 || int64(z[0].Score) != e.Clock.Now().Unix()+30 || len(e.Store.All()) != 0 {
			t.Fatalf("delayed %v", z)
		}
	})
	t.Run("hand back", func(t *testing.T) {
		e := testkit.NewEnv(t)
		ran := 0
		reg := laraq.NewJobs()
		reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { ran++; return nil })
		cfg := e.Config(reg)
		cfg.Unhandled = laraq.UnhandledPolicy{Action: laraq.HandBackUnhandled, Delay: time.Hour}
		ev := &events{}
		cfg.OnEvent = ev.add
		other := testkit.Job(t, otherJob{}, nil)
		e.Push("default", other)
		stop, _ := e.Run(e.Consumer(cfg))
		testkit.Eventually(t, 5*time.Second, "hand back", func() bool { return ev.count(laraq.EventHandedBack) == 1 })
		// The queue is left alone now: even a job it could run waits.
		e.Push("default", testkit.Job(t, testkit.SendInvoice{}, nil))
		time.Sleep(150 * time.Millisecond)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if ran != 0 || ev.count(laraq.EventHandedBack) != 1 {
			t.Fatalf("ran %d, events %v", ran, ev.kinds())
		}
		ready := e.List("queues:default")
		if len(ready) != 2 || ready[0] != string(other) {
			t.Fatalf("ready %q", ready)
		}
		if n := len(e.List("queues:default:notify")); n != 2 {
			t.Errorf("notify tokens %d, want 2", n)
		}
		if len(e.ZSet("queues:default:reserved")) != 0 || len(e.Store.All()) != 0 {
			t.Error("handed-back job reserved or failed")
		}
	})
}

type otherJob struct {
	X int `php:"x"`
}

func (otherJob) PHPClass() string { return `App\Jobs\Other` }

func TestAliasRoutesRenamedClass(t *testing.T) {
	e := testkit.NewEnv(t)
	var got []int64
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\SendInvoice`, func(ctx context.Context, cmd *testkit.SendInvoice, job *laraq.JobInfo) error {
		got = append(got, cmd.InvoiceID)
		if job.Class != `App\Jobs\Other` {
			t.Errorf("class %s", job.Class)
		}
		return nil
	})
	reg.Alias(`App\Jobs\Other`, `App\Jobs\SendInvoice`)
	cfg := e.Config(reg)
	cfg.StopWhenEmpty = true
	e.Push("default", testkit.Job(t, otherJob{X: 4}, func(j *payload.ObjectJob) {
		j.Command = `O:14:"App\Jobs\Other":1:{s:9:"invoiceId";i:77;}`
	}))
	e.RunToEnd(e.Consumer(cfg))
	if fmt.Sprint(got) != "[77]" {
		t.Errorf("got %v", got)
	}
}

func TestStringJobsRouteByJobString(t *testing.T) {
	e := testkit.NewEnv(t)
	var data map[string]any
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\Report@build`, func(ctx context.Context, d *map[string]any, job *laraq.JobInfo) error {
		data = *d
		if job.IsObjectJob() || job.Name != `App\Jobs\Report` {
			t.Errorf("job %+v", job)
		}
		return nil
	})
	cfg := e.Config(reg)
	cfg.StopWhenEmpty = true
	p, err := payload.BuildString(`App\Jobs\Report@build`, json.RawMessage(`{"month":"2024-05","ids":[1,2]}`))
	if err != nil {
		t.Fatal(err)
	}
	e.Push("default", p)
	e.RunToEnd(e.Consumer(cfg))
	if fmt.Sprint(data) != "map[ids:[1 2] month:2024-05]" {
		t.Errorf("data %v", data)
	}
	if k := e.Keys(); len(k) != 0 {
		t.Errorf("keys %v", k)
	}
}

// TestFailedRowNamesTheHandler: a handler's error carries no location of its own; the
// failed_jobs row must point at the handler (this file), not at laraq's worker.
func TestFailedRowNamesTheHandler(t *testing.T) {
	e := testkit.NewEnv(t)
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[testkit.SendInvoice]) error {
		return errors.New("card declined")
	})
	jobs.HandleFunc(`App\Jobs\Raw`, func(ctx context.Context, job *laraq.JobInfo) error { return laraq.Fail(nil) })
	cfg := e.Config(jobs)
	cfg.StopWhenEmpty = true
	e.Push("default", testkit.Job(t, testkit.SendInvoice{InvoiceID: 1}, nil),
		testkit.Job(t, testkit.SendInvoice{InvoiceID: 2}, func(j *payload.ObjectJob) { j.CommandName = `App\Jobs\Raw` }))
	e.RunToEnd(e.Consumer(cfg))
	recs := e.Store.All()
	if len(recs) != 2 {
		t.Fatalf("records %+v", recs)
	}
	for i, want := range []string{"errorString: card declined in ", `Illuminate\Queue\ManuallyFailedException in `} {
		line, _, _ := strings.Cut(recs[i].Exception, "\n")
		if !strings.Contains(line, want) || !strings.Contains(line, "rules_test.go:") {
			t.Errorf("record %d: %q: want %q at the handler in rules_test.go", i, line, want)
		}
	}
}
