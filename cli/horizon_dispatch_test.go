package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/laravel"
	"github.com/laraq/laraq/phpser"
)

// goStep is Laraq\HorizonTest\Step built in Go, its properties in PHP's order (the
// class's own, then InteractsWithQueue's and Queueable's).
type goStep struct {
	Tries int64                   `php:"tries"`
	Plan  []string                `php:"plan"`
	User  *phpser.ModelIdentifier `php:"user"`
	Users any                     `php:"users"`
	Note  string                  `php:"note"`
	laraq.Queueable
}

func (goStep) PHPClass() string { return `Laraq\HorizonTest\Step` }

// goQuiet is QuietStep, which horizon.silenced lists.
type goQuiet struct{ goStep }

func (goQuiet) PHPClass() string { return `Laraq\HorizonTest\QuietStep` }

// goTagged is TaggedStep, whose tags() Go states.
type goTagged struct{ goStep }

func (goTagged) PHPClass() string { return `Laraq\HorizonTest\TaggedStep` }
func (goTagged) Tags() []string   { return []string{"laraq", "region:eu/west"} }

// goMarked is MarkedQuietStep, which implements Horizon's Silenced contract.
type goMarked struct{ goStep }

func (goMarked) PHPClass() string { return `Laraq\HorizonTest\MarkedQuietStep` }
func (goMarked) Silenced() bool   { return true }

func newGoStep(plan []string, tries int64, user int) goStep {
	s := goStep{Tries: tries, Plan: plan}
	if user > 0 {
		conn := "laraq_models"
		s.User = &phpser.ModelIdentifier{Class: `Laraq\HorizonTest\User`, ID: int64(user), Relations: []string{}, Connection: &conn}
	}
	return s
}

// TestHorizonGoDispatchShowsInDashboard dispatches jobs with laraq.Dispatcher on a
// connection from laravel.Load and Connect (which finds Horizon in the application) and the same
// jobs through Horizon's PHP queue in a twin application; immediate and delayed. The
// dashboard must show both sets the same way while they are pending (tags from models,
// from Tagger, silenced by config and by the Silenced contract, monitored tags), and
// again after Horizon's PHP worker ran them all. The serialized commands are left out
// of the comparison: Go writes its own struct.
func TestHorizonGoDispatchShowsInDashboard(t *testing.T) {
	monitor := []string{"laraq", `Laraq\HorizonTest\User:1`}
	tags := []string{"laraq", "region:eu/west", `Laraq\HorizonTest\User:1`, `Laraq\HorizonTest\User:2`}
	phpJobs := []hzJob{
		{Plan: []string{"ok"}, User: intp(1)},
		{Plan: []string{"release", "ok"}},
		{Plan: []string{"throw"}, Tries: 1, User: intp(2)},
		{Kind: "quiet"},
		{Kind: "marked"},
		{Kind: "tagged"},
	}
	goJobs := []any{
		newGoStep([]string{"ok"}, 3, 1),
		newGoStep([]string{"release", "ok"}, 3, 0),
		newGoStep([]string{"throw"}, 1, 2),
		goQuiet{newGoStep([]string{"ok"}, 3, 0)},
		goMarked{newGoStep([]string{"ok"}, 3, 0)},
		goTagged{newGoStep([]string{"ok"}, 3, 0)},
	}
	silenced := []string{`Laraq\HorizonTest\QuietStep`}
	for _, major := range testenv.HorizonMajors {
		t.Run(fmt.Sprintf("laravel-%d", major), func(t *testing.T) {
			ctx := context.Background()
			php := newHzApp(t, major, silenced)
			php.play(t, monitor, []hzStoryStep{{dispatch: phpJobs}}, nil)
			gor := newHzApp(t, major, silenced)
			gor.php.Run(t, "monitor", map[string]any{"tags": monitor}, nil)
			rel, err := laraq.ParseRelease(hzPeerVersion[major])
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := laravel.Load(laravel.App{Root: gor.root, Release: rel, LookupEnv: func(string) (string, bool) { return "", false }})
			if err != nil {
				t.Fatal(err)
			}
			conn, err := cfg.Connect(ctx, laravel.ConnectOptions{WithoutFailedStore: true})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if conn.Horizon == nil || conn.Horizon.Prefix != gor.php.HorizonPrefix || fmt.Sprint(conn.Horizon.Silenced) != fmt.Sprint(silenced) {
				t.Fatalf("laravel.Connect: Horizon %+v, want prefix %s, silenced %v", conn.Horizon, gor.php.HorizonPrefix, silenced)
			}
			d, err := laraq.NewDispatcher(conn)
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range goJobs {
				id, err := d.Dispatch(ctx, j)
				if err != nil {
					t.Fatal(err)
				}
				gor.ids = append(gor.ids, id)
				time.Sleep(time.Millisecond)
			}
			norm := func(a *hzApp) (raw, dash map[string]any) {
				t.Helper()
				raw, dash = a.readBack(t, tags)
				return withoutCommands(t, raw), withoutCommands(t, dash)
			}
			phpRaw, phpDash := norm(php)
			goRaw, goDash := norm(gor)
			testenv.AssertSameJSON(t, "pending: raw keys", goRaw, phpRaw)
			testenv.AssertSameJSON(t, "pending: dashboard", goDash, phpDash)
			if n := fmt.Sprint(goDash["counts"].(map[string]any)["pending"]); n != "6" {
				t.Errorf("pending count %s, want 6", n)
			}

			for _, a := range []*hzApp{php, gor} {
				a.play(t, nil, []hzStoryStep{{work: true}}, nil)
			}
			phpRaw, phpDash = norm(php)
			goRaw, goDash = norm(gor)
			testenv.AssertSameJSON(t, "worked: raw keys", goRaw, phpRaw)
			testenv.AssertSameJSON(t, "worked: dashboard", goDash, phpDash)
			counts := goDash["counts"].(map[string]any)
			for k, want := range map[string]string{"completed": "3", "silenced": "2", "failed": "1", "pending": "0"} {
				if got := fmt.Sprint(counts[k]); got != want {
					t.Errorf("after PHP's worker: count %s = %s, want %s", k, got, want)
				}
			}
		})
	}
}

// withoutCommands replaces data.command in every payload, decoded (the dashboard's
// records) or as JSON text (the raw hashes), by COMMAND.
func withoutCommands(t *testing.T, v map[string]any) map[string]any {
	t.Helper()
	var walk func(key string, v any) any
	walk = func(key string, v any) any {
		switch v := v.(type) {
		case map[string]any:
			if cmd, ok := v["command"]; ok && key == "data" {
				if _, isString := cmd.(string); isString {
					v["command"] = "COMMAND"
				}
			}
			for k, x := range v {
				v[k] = walk(k, x)
			}
		case []any:
			for i, x := range v {
				v[i] = walk(key, x)
			}
		case string:
			if key != "payload" {
				return v
			}
			var p map[string]any
			if err := json.Unmarshal([]byte(v), &p); err != nil {
				return v
			}
			walk("", p)
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
		return v
	}
	return walk("", v).(map[string]any)
}
