package payload

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

// hzCase is one job of the Horizon payload comparison, as testdata/php/horizon/op.php
// prepare takes it, with what Go must be told that PHP learns from the object.
type hzCase struct {
	UUID  string `json:"uuid"`
	Kind  string `json:"kind"`
	User  *int   `json:"user,omitempty"`
	Users []int  `json:"users,omitempty"`
	Note  string `json:"note,omitempty"`
	Data  any    `json:"data,omitempty"`

	tags     []string // the class's tags() (TaggedStep)
	silenced bool     // implements Silenced (MarkedQuietStep)
}

func ip(n int) *int { return &n }

var hzSilenced = []string{`Laraq\HorizonTest\QuietStep`, `Laraq\HorizonTest\Listener`, `Laraq\HorizonTest\Mail`,
	`Laraq\HorizonTest\StringJob@handle`}

func hzCases() []hzCase {
	cases := []hzCase{
		{Kind: "step", User: ip(1), Users: []int{1, 2, 3}, Note: "Zoë / 東京 \u2028 \"q\""}, // models and a collection, unicode
		{Kind: "step", Users: []int{}},                // an empty collection: no tags
		{Kind: "step"},                                // no models
		{Kind: "quiet", User: ip(2)},                  // horizon.silenced
		{Kind: "marked", User: ip(2), silenced: true}, // the Silenced interface
		{Kind: "tagged", User: ip(3), tags: []string{"laraq", "region:eu/west"}},         // tags() wins over models
		{Kind: "listener", User: ip(2), Note: "Zoë/€"},                                   // type event, tags of the event, silenced listener
		{Kind: "broadcast", User: ip(4)},                                                 // type broadcast
		{Kind: "mail", User: ip(5)},                                                      // type mail, silenced mailable
		{Kind: "notification", User: ip(2), Users: []int{1, 3}},                          // type notification: the notification's models only
		{Kind: "string", Data: map[string]any{"url": "https://example.com/a", "n": 1.5}}, // a string job
	}
	for i := range cases {
		cases[i].UUID = fmt.Sprintf("9a0c5d2e-1b7f-4c3a-8e6d-%012d", i+1)
	}
	return cases
}

// TestPrepareForHorizonMatchesHorizonPush compares PrepareForHorizon with the bytes
// Horizon's own RedisQueue::push stores, on Laravel 10 and 11: from the framework's
// payload for the same job (what a vanilla dispatch writes), and from the payload Go's
// BuildObject / BuildString writes for it.
//
// Horizon 5.29 declares Laravel 10 and 11; its RedisQueue runs unchanged on the 12.x and
// 13.x trees too, whose payloads add createdAt, data.batchId, delay (and
// deleteWhenMissingModels on 13), so those majors are compared as well.
func TestPrepareForHorizonMatchesHorizonPush(t *testing.T) {
	srv := testenv.RedisServer(t)
	versions := map[int]Shape{10: {}, 11: {}, 12: {CreatedAt: true, BatchID: true}, 13: {CreatedAt: true, BatchID: true, DeleteWhenMissingModels: true}}
	for _, major := range []int{10, 11, 12, 13} {
		t.Run(fmt.Sprintf("laravel-%d", major), func(t *testing.T) {
			base := "lq" + testenv.RandomName(4)
			php := testenv.HorizonPHP{Major: major, Redis: srv, Prefix: base + "_database_", HorizonPrefix: base + "_horizon:", Silenced: hzSilenced}
			t.Cleanup(func() { srv.Client(t, 0).Del(t.Context(), base+"_database_queues:default") })
			cases := hzCases()
			var out []struct{ Plain, Horizon string }
			php.Run(t, "prepare", map[string]any{"cases": cases}, &out)
			if len(out) != len(cases) {
				t.Fatalf("%d results for %d cases", len(out), len(cases))
			}
			for i, tc := range cases {
				t.Run(tc.Kind+strconv.Itoa(i), func(t *testing.T) {
					want := out[i].Horizon
					pushed, err := Parse([]byte(want))
					if err != nil {
						t.Fatal(err)
					}
					o := HorizonPrepare{PushedAt: parsePushedAt(t, pushed.PushedAt), Tags: tc.tags, Silenced: tc.silenced, SilencedClasses: hzSilenced}
					got, err := PrepareForHorizon([]byte(out[i].Plain), o)
					if err != nil {
						t.Fatal(err)
					}
					if string(got) != want {
						t.Errorf("from the framework's payload:\n got: %s\nwant: %s", got, want)
					}
					built := buildLike(t, out[i].Plain, versions[major])
					got, err = PrepareForHorizon(built, o)
					if err != nil {
						t.Fatal(err)
					}
					if string(got) != want {
						t.Errorf("from Go's payload:\n got: %s\nwant: %s", got, want)
					}
				})
			}
		})
	}
}

// parsePushedAt reads Horizon's pushedAt back into the instant it was printed from.
func parsePushedAt(t *testing.T, s string) time.Time {
	t.Helper()
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		t.Fatalf("pushedAt %q", s)
	}
	frac = (frac + "000000")[:6]
	us, _ := strconv.ParseInt(frac, 10, 64)
	return time.Unix(n, us*1000)
}

// buildLike writes with BuildObject or BuildString the payload Go would build for the
// job of a framework payload (its own random id: Horizon replaces it).
func buildLike(t *testing.T, plain string, v Shape) []byte {
	t.Helper()
	env, err := Parse([]byte(plain))
	if err != nil {
		t.Fatal(err)
	}
	var created int64
	if env.CreatedAt != nil {
		created = *env.CreatedAt
	}
	var b []byte
	if env.IsObjectJob() {
		b, err = BuildObject(ObjectJob{UUID: env.UUID, DisplayName: env.DisplayName, CommandName: env.CommandName,
			Command: env.Command, MaxTries: env.MaxTries, MaxExceptions: env.MaxExceptions, Timeout: env.Timeout,
			RetryUntil: env.RetryUntil, FailOnTimeout: env.FailOnTimeout, Backoff: env.Backoff,
			BatchID: env.BatchID, CreatedAt: created, DeleteWhenMissingModels: deleteWhenMissing(env)}, v)
	} else {
		b, err = BuildString(env.Job, env.Data, WithUUID(env.UUID), WithShape(v), WithCreatedAt(created))
	}
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); s == plain {
		t.Fatal("Go's payload has the framework's id")
	}
	return b
}

func TestPrepareForHorizonErrors(t *testing.T) {
	at := time.Unix(1729411372, 393200000)
	obj := func(command string) string {
		return `{"uuid":"u-1","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call",` +
			`"data":{"commandName":"App\\Jobs\\X","command":` + strconv.Quote(command) + `},"id":"r","attempts":0}`
	}
	for _, tc := range []struct {
		name, raw string
		o         HorizonPrepare
		err       string
	}{
		{"no time", obj(`O:8:"App\Jobs\X":0:{}`), HorizonPrepare{}, "PushedAt is required"},
		{"not json", `{"uuid":`, HorizonPrepare{PushedAt: at}, "payload: horizon:"},
		{"not an object", `[1]`, HorizonPrepare{PushedAt: at}, "not a JSON object"},
		{"no uuid", `{"id":"x","attempts":0}`, HorizonPrepare{PushedAt: at}, "has no uuid"},
		{"encrypted command", obj("eyJpdiI6IjEyMyJ9"), HorizonPrepare{PushedAt: at}, "pass HorizonPrepare.Tags"},
	} {
		if _, err := PrepareForHorizon([]byte(tc.raw), tc.o); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
	}
	// With explicit tags the encrypted command is not needed.
	got, err := PrepareForHorizon([]byte(obj("eyJpdiI6IjEyMyJ9")), HorizonPrepare{PushedAt: at, Tags: []string{"a", "a", "b/c"}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"uuid":"u-1","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call",` +
		`"data":{"commandName":"App\\Jobs\\X","command":"eyJpdiI6IjEyMyJ9"},"id":"u-1","attempts":0,` +
		`"type":"job","tags":["a","b\/c"],"silenced":false,"pushedAt":"1729411372.3932"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func deleteWhenMissing(env *Envelope) bool {
	raw, ok := env.Get("deleteWhenMissingModels")
	return ok && string(raw) == "true"
}

// TestPrepareForHorizonLaterAndRawMatchHorizon compares HorizonPrepare.Later and .Raw
// with Horizon's own later() and pushRaw() on every major whose tree Horizon's queue
// runs on. later() builds its payload without the delay (createPayload($job, $queue,
// $data)), so from Laravel 12.11, whose payloads carry "delay", Horizon's delayed jobs
// say "delay":null where the framework's say the seconds; pushRaw() without a job object
// adds type job, the payload's own tags and silenced false, and keeps the id.
func TestPrepareForHorizonLaterAndRawMatchHorizon(t *testing.T) {
	srv := testenv.RedisServer(t)
	versions := map[int]Shape{10: {}, 11: {}, 12: {CreatedAt: true, BatchID: true}, 13: {CreatedAt: true, BatchID: true, DeleteWhenMissingModels: true}}
	for _, major := range []int{10, 11, 12, 13} {
		t.Run(fmt.Sprintf("laravel-%d", major), func(t *testing.T) {
			base := "lq" + testenv.RandomName(4)
			php := testenv.HorizonPHP{Major: major, Redis: srv, Prefix: base + "_database_", HorizonPrefix: base + "_horizon:", Silenced: hzSilenced}
			t.Cleanup(func() {
				srv.Client(t, 0).Del(t.Context(), base+"_database_queues:default", base+"_database_queues:default:delayed")
			})
			cases := hzCases()
			for _, mode := range []string{"later", "raw"} {
				var out []struct{ Plain, Horizon string }
				php.Run(t, "prepare", map[string]any{"cases": cases, "mode": mode, "delay": 7}, &out)
				if len(out) != len(cases) {
					t.Fatalf("%s: %d results for %d cases", mode, len(out), len(cases))
				}
				for i, tc := range cases {
					want := out[i].Horizon
					pushed, err := Parse([]byte(want))
					if err != nil {
						t.Fatalf("%s %s: %v: %s", mode, tc.Kind, err, want)
					}
					plain, err := Parse([]byte(out[i].Plain))
					if err != nil {
						t.Fatal(err)
					}
					o := HorizonPrepare{PushedAt: parsePushedAt(t, pushed.PushedAt), Tags: tc.tags, Silenced: tc.silenced,
						SilencedClasses: hzSilenced, Later: mode == "later", Raw: mode == "raw"}
					got, err := PrepareForHorizon([]byte(out[i].Plain), o)
					if err != nil {
						t.Fatal(err)
					}
					if string(got) != want {
						t.Errorf("%s %s%d:\n got: %s\nwant: %s", mode, tc.Kind, i, got, want)
					}
					_, hasDelay := plain.Get("delay")
					if mode == "later" && versions[major].CreatedAt != hasDelay {
						t.Errorf("%s: the framework's later() payload has delay: %v", tc.Kind, hasDelay)
					}
					if mode == "later" && hasDelay && !strings.Contains(want, `"delay":null`) {
						t.Errorf("%s: Horizon's later() payload %s has a delay", tc.Kind, want)
					}
				}
			}
		})
	}
}
