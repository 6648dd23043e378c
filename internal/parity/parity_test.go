package parity

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
)

type parityScenario struct {
	name    string
	legacy  bool   // the job is App\Jobs\LegacyScripted: Scripted with retryAfter and timeoutAt
	props   string // App\Jobs\Scripted properties (dispatch.php readable form)
	delay   *int   // dispatch delay in seconds (->delay(N)); 12.11+ writes it as the payload's delay
	tries   int    // both workers' --tries
	backoff int    // both workers' --backoff
	noUUID  bool   // rewrite the payload into the uuid-less shape of Laravel 5.x
	// timeoutAt, when set, renames retryUntil to the timeoutAt of Laravel 5.x–7.x
	// payloads, with this value.
	timeoutAt int64
	// want is the expected course, one entry per step: "<ran> → <where the job is>".
	want []string
	// since overrides want from a release on: the last entry whose release the peer has
	// reached wins (Laravel 10.10 fails timeouts with TimeoutExceededException, 12.11
	// writes the dispatch delay that becomes the backoff).
	since []parityWant
	// before overrides want and since up to a release: the first entry whose release the
	// peer has not reached wins. 5.8-7.x read neither the backoff nor the retryUntil
	// property (8.0 renamed retryAfter and timeoutAt), nor failOnTimeout (8.43); 5.8 and
	// 6.x have no maxExceptions (7.0).
	before []parityWant
	// phpLosesRecord: PHP's DatabaseUuidFailedJobProvider cannot write a row without
	// uuid (NOT NULL), so the PHP worker deletes the job and records nothing; laraq's
	// store gives the row a generated uuid instead. The final Go row is checked
	// separately and left out of the comparison.
	phpLosesRecord bool
}

// parityWant is a scenario's course from one release on.
type parityWant struct {
	release string
	want    []string
}

// course is the scenario's expected course on rel.
func (sc parityScenario) course(t *testing.T, rel laraq.Release) []string {
	for _, b := range sc.before {
		if rel.Compare(testkit.MustRelease(t, b.release)) < 0 {
			return b.want
		}
	}
	want := sc.want
	for _, s := range sc.since {
		if rel.Compare(testkit.MustRelease(t, s.release)) >= 0 {
			want = s.want
		}
	}
	return want
}

var parityScenarios = []parityScenario{{
	name:   "exception on each of 3 tries, backoff 1,5",
	props:  `{"actions":["throw"],"tries":3,"backoff":"1,5"}`,
	want:   []string{"a1:throw → delayed+1", "a2:throw → delayed+5", "a3:throw → failed RuntimeException"},
	before: []parityWant{{"8.0", []string{"a1:throw → delayed+0", "a2:throw → delayed+0", "a3:throw → failed RuntimeException"}}},
}, {
	name:  "retryUntil already passed",
	props: fmt.Sprintf(`{"actions":["ok"],"retryUntil":%d}`, testkit.ParityT0-10),
	want:  []string{"- → failed MaxAttemptsExceededException"},
	// 5.8-7.x's createObjectPayload reads a timeoutAt property, not retryUntil.
	before: []parityWant{{"8.0", []string{"a1:ok → gone"}}},
}, {
	name:   "retryUntil overrides tries",
	props:  fmt.Sprintf(`{"actions":["throw"],"tries":1,"retryUntil":%d}`, testkit.ParityT0+150),
	want:   []string{"a1:throw → delayed+0", "a2:throw → delayed+0", "- → failed MaxAttemptsExceededException"},
	before: []parityWant{{"8.0", []string{"a1:throw → failed RuntimeException", "- → failed RuntimeException", "- → failed RuntimeException"}}},
}, {
	name:   "maxExceptions 2 of 5 tries, a release in between",
	props:  `{"actions":["throw","release:3","throw"],"tries":5,"maxExceptions":2}`,
	want:   []string{"a1:throw → delayed+0 exc=1", "a2:release:3 → delayed+3 exc=1", "a3:throw → failed RuntimeException"},
	before: []parityWant{{"7.0", []string{"a1:throw → delayed+0", "a2:release:3 → delayed+3", "a3:throw → delayed+0"}}},
}, {
	name:  "timeout leaves the job reserved, the next one fails it",
	props: `{"actions":["sleep:3"],"tries":2,"timeout":1}`,
	want:  []string{"a1:sleep:3 → reserved+60", "a2:sleep:3 → failed MaxAttemptsExceededException"},
	since: []parityWant{{"10.10", []string{"a1:sleep:3 → reserved+60", "a2:sleep:3 → failed TimeoutExceededException"}}},
}, {
	name:   "timeout with failOnTimeout",
	props:  `{"actions":["sleep:3"],"tries":3,"timeout":1,"failOnTimeout":true}`,
	want:   []string{"a1:sleep:3 → failed MaxAttemptsExceededException"},
	since:  []parityWant{{"10.10", []string{"a1:sleep:3 → failed TimeoutExceededException"}}},
	before: []parityWant{{"8.0", []string{"a1:sleep:3 → reserved+60"}}},
}, {
	// The timeout counts as an exception: maxExceptions 1 fails the job at its first
	// timeout, with the timeout's exception. Not before 8.0 (7.x counts only the
	// exceptions a job throws).
	name:   "timeout counts towards maxExceptions",
	props:  `{"actions":["sleep:3"],"tries":5,"timeout":1,"maxExceptions":1}`,
	want:   []string{"a1:sleep:3 → failed MaxAttemptsExceededException"},
	since:  []parityWant{{"10.10", []string{"a1:sleep:3 → failed TimeoutExceededException"}}},
	before: []parityWant{{"8.0", []string{"a1:sleep:3 → reserved+60"}}},
}, {
	// Timed-out attempts are never failed while retryUntil lies ahead; once it has
	// passed, the next pop fails the job before running it (the max-attempts text, on
	// every release).
	name:  "timeouts until retryUntil passes",
	props: fmt.Sprintf(`{"actions":["sleep:3"],"timeout":1,"retryUntil":%d}`, testkit.ParityT0+150),
	want:  []string{"a1:sleep:3 → reserved+60", "a2:sleep:3 → reserved+60", "- → failed MaxAttemptsExceededException"},
	// No retryUntil read before 8.0: --tries 1 fails the job at its first timeout.
	before: []parityWant{{"8.0", []string{"a1:sleep:3 → failed MaxAttemptsExceededException", "- → failed MaxAttemptsExceededException", "- → failed MaxAttemptsExceededException"}}},
}, {
	name:  "handler releases itself; releases use up tries",
	props: `{"actions":["release:7","release:2"],"tries":2}`,
	want:  []string{"a1:release:7 → delayed+7", "a2:release:2 → delayed+2", "- → failed MaxAttemptsExceededException"},
}, {
	// Job::backoff() is backoff ?? delay: from 12.11 the payload carries the dispatch
	// delay, which then wins over --backoff.
	name:    "dispatch delay becomes the backoff on 12.11+",
	props:   `{"actions":["throw","throw","ok"],"tries":3}`,
	delay:   new(5),
	backoff: 9,
	want:    []string{"- → delayed+5", "a1:throw → delayed+9", "a2:throw → delayed+9", "a3:ok → gone"},
	since:   []parityWant{{"12.11", []string{"- → delayed+5", "a1:throw → delayed+5", "a2:throw → delayed+5", "a3:ok → gone"}}},
}, {
	// A backoff property wins over the payload's delay.
	name:   "backoff property wins over the dispatch delay",
	props:  `{"actions":["throw","ok"],"tries":2,"backoff":2}`,
	delay:  new(5),
	want:   []string{"- → delayed+5", "a1:throw → delayed+2", "a2:ok → gone"},
	before: []parityWant{{"8.0", []string{"- → delayed+5", "a1:throw → delayed+0", "a2:ok → gone"}}},
}, {
	// ->delay(0) is a delay: later() puts the job in :delayed, due at once, and 12.11+
	// writes "delay":0, so --backoff no longer applies.
	name:    "a zero dispatch delay still overrides --backoff on 12.11+",
	props:   `{"actions":["throw","ok"],"tries":2}`,
	delay:   new(0),
	backoff: 6,
	want:    []string{"a1:throw → delayed+6", "a2:ok → gone"},
	since:   []parityWant{{"12.11", []string{"a1:throw → delayed+0", "a2:ok → gone"}}},
}, {
	// The last try fails the job and still counts the exception: the counter stays
	// behind for a day, on every release.
	name:   "maxExceptions counted on the failing try",
	props:  `{"actions":["throw"],"tries":2,"maxExceptions":5}`,
	want:   []string{"a1:throw → delayed+0 exc=1", "a2:throw → failed RuntimeException exc=2"},
	before: []parityWant{{"7.0", []string{"a1:throw → delayed+0", "a2:throw → failed RuntimeException"}}},
}, {
	// Job::retryUntil() fell back to the pre-8.0 timeoutAt key until 9.26 (5.8-7.x read
	// nothing else).
	name:      "timeoutAt of a 7.x payload, past",
	props:     `{"actions":["ok"]}`,
	timeoutAt: testkit.ParityT0 - 10,
	want:      []string{"- → failed MaxAttemptsExceededException"},
	since:     []parityWant{{"9.26", []string{"a1:ok → gone"}}},
}, {
	name:    "no uuid (5.x payload), worker tries and backoff",
	props:   `{"actions":["throw","ok"]}`,
	tries:   3,
	backoff: 4,
	noUUID:  true,
	want:    []string{"a1:throw → delayed+4", "a2:ok → gone"},
}, {
	name:           "no uuid (5.x payload) failing",
	props:          `{"actions":["throw"]}`,
	tries:          2,
	backoff:        4,
	noUUID:         true,
	want:           []string{"a1:throw → delayed+4", "a2:throw → gone"},
	phpLosesRecord: true,
	// 5.8-7.x's database provider needs no uuid: the row is written.
	before: []parityWant{{"8.0", []string{"a1:throw → delayed+4", "a2:throw → failed RuntimeException"}}},
}, {
	name:   "tries 0 is unlimited, backoff 2,4",
	props:  `{"actions":["throw","throw","throw","throw","ok"],"tries":0,"backoff":"2,4"}`,
	want:   []string{"a1:throw → delayed+2", "a2:throw → delayed+4", "a3:throw → delayed+4", "a4:throw → delayed+4", "a5:ok → gone"},
	before: []parityWant{{"8.0", []string{"a1:throw → delayed+0", "a2:throw → delayed+0", "a3:throw → delayed+0", "a4:throw → delayed+0", "a5:ok → gone"}}},
}, {
	// $maxTries === 0 is strict: a string "0" is not unlimited, and 1 <= "0" is false.
	name:  `tries "0" as a string fails before running`,
	props: `{"actions":["ok"],"tries":"0"}`,
	want:  []string{"- → failed MaxAttemptsExceededException"},
}, {
	name:  "handler fails the job",
	props: `{"actions":["throw","fail:card declined"],"tries":3}`,
	want:  []string{"a1:throw → delayed+0", "a2:fail:card declined → failed RuntimeException"},
}, {
	name:  "handler deletes the job",
	props: `{"actions":["delete"],"tries":3}`,
	want:  []string{"a1:delete → gone"},
}, {
	// 5.8-7.x's retry delay: a retryAfter property, written as the payload's delay and
	// read back by the worker (delaySeconds()) before --backoff. 8.0+ reads no such
	// property.
	name:    "retryAfter property before 8.0",
	legacy:  true,
	props:   `{"actions":["throw","ok"],"tries":2,"retryAfter":3}`,
	backoff: 1,
	want:    []string{"a1:throw → delayed+1", "a2:ok → gone"},
	before:  []parityWant{{"8.0", []string{"a1:throw → delayed+3", "a2:ok → gone"}}},
}, {
	// 5.8-7.x's expiry: a timeoutAt property, written as the payload's timeoutAt.
	name:   "timeoutAt property before 8.0, past",
	legacy: true,
	props:  fmt.Sprintf(`{"actions":["ok"],"timeoutAt":%d}`, testkit.ParityT0-10),
	want:   []string{"a1:ok → gone"},
	before: []parityWant{{"8.0", []string{"- → failed MaxAttemptsExceededException"}}},
}, {
	// Until 8.15 an exception on the last try fails the job even when its expiry lies
	// ahead (the tries check ran beside the expiry's); 8.15 to 9.25 read the payload's
	// timeoutAt as retryUntil, which then spares it; 9.26+ no longer read timeoutAt.
	name:      "timeoutAt ahead and tries 1",
	props:     `{"actions":["throw"],"tries":1}`,
	timeoutAt: testkit.ParityT0 + 150,
	want:      []string{"a1:throw → delayed+0", "a2:throw → delayed+0", "- → failed MaxAttemptsExceededException"},
	since:     []parityWant{{"9.26", []string{"a1:throw → failed RuntimeException"}}},
	before:    []parityWant{{"8.15", []string{"a1:throw → failed RuntimeException"}}},
}}

// scriptedHandler plays App\Jobs\Scripted::handle for the Go worker and notes each run.
func scriptedHandler(mu *sync.Mutex, ran *[]string) func(ctx context.Context, cmd *testkit.ScriptedJob, job *laraq.JobInfo) error {
	return func(ctx context.Context, cmd *testkit.ScriptedJob, job *laraq.JobInfo) error {
		actions := cmd.Actions
		if len(actions) == 0 {
			actions = []string{"ok"}
		}
		n := max(1, job.Attempt)
		action := actions[min(n, len(actions))-1]
		mu.Lock()
		*ran = append(*ran, fmt.Sprintf("a%d:%s", job.Attempt, action))
		mu.Unlock()
		verb, arg, hasArg := strings.Cut(action, ":")
		switch verb {
		case "ok":
			return nil
		case "throw":
			if !hasArg {
				arg = fmt.Sprintf("scripted failure on attempt %d", n)
			}
			return failed.New("RuntimeException", arg, 0)
		case "release":
			s, _ := strconv.Atoi(arg)
			return laraq.ReleaseAfter(time.Duration(s) * time.Second)
		case "fail":
			if !hasArg {
				arg = fmt.Sprintf("scripted fail on attempt %d", n)
			}
			return laraq.Fail(failed.New("RuntimeException", arg, 0))
		case "delete":
			return laraq.Delete()
		case "sleep":
			s, _ := strconv.ParseFloat(arg, 64)
			select {
			case <-time.After(time.Duration(s * float64(time.Second))):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return fmt.Errorf("unknown scripted action %s", action)
	}
}

// uuidLess rewrites a Laravel 8 payload into the shape Laravel 5.x pushed (sample S1): no
// uuid, no backoff, maxExceptions or retryUntil, a null timeoutAt.
func uuidLess(t *testing.T, p []byte) []byte {
	t.Helper()
	env, err := payload.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := payload.AppendJSONString(nil, env.Command, 0)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(`{"displayName":"App\\Jobs\\Scripted","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"timeout":null,"timeoutAt":null,` +
		`"data":{"commandName":"App\\Jobs\\Scripted","command":` + string(cmd) + `},"id":"` + env.ID + `","attempts":0}`)
}

// parityRuns bounds the scenarios that run at once across releases. Most of a run is
// spent waiting (PHP's boot, timeouts that sleep), so more run at once than -parallel's
// default lets parallel subtests.
var parityRuns = make(chan struct{}, 4)

// TestParityWithLaravelWorker runs every scenario on every release of the matrix: the
// release's own Worker against a laraq worker told that release.
func TestParityWithLaravelWorker(t *testing.T) {
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		peer := testenv.Peer(t, major)
		var wg sync.WaitGroup
		for _, sc := range parityScenarios {
			wg.Add(1)
			go func() {
				defer wg.Done()
				parityRuns <- struct{}{}
				defer func() { <-parityRuns }()
				t.Run(sc.name, func(t *testing.T) { runParity(t, sc, peer) })
			}()
		}
		wg.Wait()
	})
}

func runParity(t *testing.T, sc parityScenario, peer testenv.PeerInfo) {
	ctx := context.Background()
	major := peer.Major
	rel := testkit.PeerInfoRelease(t, peer)
	srv := testenv.RedisServer(t)
	php := testkit.NewSide(t, ctx, srv, "php", major)
	gos := testkit.NewSide(t, ctx, srv, "go", major)
	records := testkit.RecordFile(t)
	penv := testenv.PHPEnv{Major: major, Redis: srv, Prefix: php.Prefix, RetryAfter: testkit.ParityRetryAfter, FailedDB: php.DSN, Record: records}
	tries := max(sc.tries, 1)
	wantCourse := sc.course(t, rel)
	// 5.8-7.x's database provider has no uuid column to leave empty: it records the job.
	losesRecord := sc.phpLosesRecord && testenv.DatabaseUUIDs.Has(major)

	// The starting state: Laravel dispatches the job (side PHP); Go gets the same keys.
	class := `App\Jobs\Scripted`
	if sc.legacy {
		class = `App\Jobs\LegacyScripted`
	}
	req := `{"class":` + strconv.Quote(class) + `,"props":` + sc.props
	if sc.delay != nil {
		req += fmt.Sprintf(`,"delay":%d`, *sc.delay)
	}
	d := testkit.PHPDispatch(t, penv, []string{fmt.Sprint("--now=", testkit.ParityT0)}, req+"}")[0]
	start := []byte(d.Payload)
	rPHP, _ := rdb.New(php.Queue, rdb.Options{Prefix: php.Prefix})
	if sc.timeoutAt != 0 {
		// 8.0+ payloads: retryUntil renamed; 5.8-7.x payloads have the key already.
		start = []byte(strings.Replace(string(start), `"retryUntil":null`, fmt.Sprintf(`"timeoutAt":%d`, sc.timeoutAt), 1))
		start = []byte(strings.Replace(string(start), `"timeoutAt":null`, fmt.Sprintf(`"timeoutAt":%d`, sc.timeoutAt), 1))
	}
	if sc.noUUID || sc.timeoutAt != 0 {
		if sc.noUUID {
			start = uuidLess(t, start)
		}
		php.Reset(t, ctx)
		if err := rPHP.Push(ctx, "default", start); err != nil {
			t.Fatal(err)
		}
	}
	testkit.CopyQueueKeys(t, ctx, php, gos)
	env, err := payload.Parse(start)
	if err != nil {
		t.Fatal(err)
	}
	uuid := env.UUID

	var mu sync.Mutex
	var goRan []string
	reg := laraq.NewJobs()
	testkit.Register(reg, class, scriptedHandler(&mu, &goRan))

	log := testkit.QuietLogger(t)
	var report strings.Builder
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("Laravel %s: %s\n%s", peer.Tag, fmt.Sprintf(format, args...), report.String())
	}
	first, firstGo := php.Capture(t, ctx, testkit.ParityT0, uuid), gos.Capture(t, ctx, testkit.ParityT0, uuid)
	if diff, same := testkit.SideBySide(first.Lines, firstGo.Lines); !same {
		fail("starting states differ:\n%s", diff)
	}
	seenRecords := 0
	var got []string
	for step := 0; step < len(wantCourse); step++ {
		now := int64(testkit.ParityT0 + step*testkit.ParityStepGap)

		out, died := runPHPStep(t, penv, "--max-jobs=1", "--stop-when-empty", "--sleep=0",
			fmt.Sprint("--now=", now), fmt.Sprint("--tries=", tries), fmt.Sprint("--backoff=", sc.backoff))
		phpRan := "-"
		recs := testkit.ReadRecords(t, records)
		for _, r := range recs[seenRecords:] {
			if r.Event == "handle" {
				phpRan = fmt.Sprintf("a%d:%s", r.Attempts, r.Action)
			}
		}
		seenRecords = len(recs)

		mu.Lock()
		goRan = goRan[:0]
		mu.Unlock()
		c, err := testkit.NewWorker(gos.Queue, testkit.Setup{
			Prefix: gos.Prefix, Registry: reg, Failed: gos.Store, Release: rel,
			Tries: new(tries), Backoff: []int{sc.backoff},
			RetryAfter: testkit.ParityRetryAfter * time.Second, Now: func() time.Time { return time.Unix(now, 0) },
			MaxJobs: 1, StopWhenEmpty: true, Sleep: -1, MigrateInterval: -1,
			Cache:  testkit.PeerCache(gos.Cache, peer),
			Logger: log,
		})
		if err != nil {
			t.Fatal(err)
		}
		runCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = c.Run(runCtx)
		cancel()
		if !errors.Is(err, laraq.ErrMaxJobs) && !errors.Is(err, laraq.ErrQueueEmpty) {
			t.Fatalf("step %d: Go worker: %v", step+1, err)
		}
		mu.Lock()
		goRanText := "-"
		if len(goRan) > 0 {
			goRanText = strings.Join(goRan, ",")
		}
		mu.Unlock()

		a, b := php.Capture(t, ctx, now, uuid), gos.Capture(t, ctx, now, uuid)
		if losesRecord && step == len(wantCourse)-1 {
			var kept []string
			var extra []string
			for _, l := range b.Lines {
				if strings.HasPrefix(l, "failed: uuid=generated ") {
					extra = append(extra, l)
					continue
				}
				kept = append(kept, l)
			}
			b.Lines = kept
			if len(extra) != 1 || !strings.Contains(extra[0], "exception=RuntimeException: scripted failure on attempt 2") {
				fail("step %d: Go should keep the uuid-less job as one failed row with a generated uuid, has %q", step+1, extra)
			}
			if !strings.Contains(out, "NOT NULL constraint failed: failed_jobs.uuid") {
				fail("step %d: PHP's provider was expected to fail on the missing uuid:\n%s", step+1, out)
			}
			a.Note = "PHP lost the job (no failed row); Go: " + extra[0]
			b.Summary = a.Summary
		}
		diff, same := testkit.SideBySide(append([]string{"ran: " + phpRan}, a.Lines...), append([]string{"ran: " + goRanText}, b.Lines...))
		note := ""
		if died {
			note = " (the PHP worker killed itself on the timeout)"
		}
		if a.Note != "" {
			note += " (" + a.Note + ")"
		}
		fmt.Fprintf(&report, "  step %d at T0+%d%s:\n%s", step+1, now-testkit.ParityT0, note, diff)
		if !same {
			fail("step %d: PHP and Go left different states", step+1)
		}
		got = append(got, phpRan+" → "+a.Summary)
	}
	if strings.Join(got, "\n") != strings.Join(wantCourse, "\n") {
		fail("both workers agree, but not on the expected course:\n got  %q\n want %q", got, wantCourse)
	}
	if testing.Verbose() {
		t.Logf("Laravel %s, %s: %s\n%s", peer.Tag, sc.name, strings.Join(got, " | "), report.String())
	}
}
