package phpser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

// The testdata/phpser/laravel fixtures come from the real Laravel 8 components
// (capture.php); the classes they name are in laravel_classes.php.

func laravelDir() string { return testenv.Testdata("phpser", "laravel") }

func readLaravel(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(laravelDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var laravelCommands = []string{"podcast_job", "welcome_email", "plain_job"}

type priority string

func (priority) PHPClass() string { return `App\Enums\Priority` }

type channel string

func (channel) PHPClass() string { return `App\Enums\Channel` }

type withoutOverlapping struct {
	Key          string `php:"key"`
	ReleaseAfter int    `php:"releaseAfter"`
	ExpiresAfter int    `php:"expiresAfter"`
	Prefix       string `php:"prefix"`
}

func (withoutOverlapping) PHPClass() string { return `Illuminate\Queue\Middleware\WithoutOverlapping` }

// processPodcast is App\Jobs\ProcessPodcast of laravel_classes.php.
type processPodcast struct {
	Tries     int             `php:"tries"`
	Timeout   int             `php:"timeout"`
	Backoff   []int           `php:"backoff"`
	Score     float64         `php:"score"`
	Podcast   ModelIdentifier `php:"podcast,protected"`
	Options   Map             `php:"options,private"`
	Title     string          `php:"title"`
	Tags      []string        `php:"tags"`
	Priority  priority        `php:"priority"`
	Listeners ModelIdentifier `php:"listeners"`
	PublishAt time.Time       `php:"publishAt"`
	Queueable
}

func (processPodcast) PHPClass() string { return `App\Jobs\ProcessPodcast` }

type sendWelcomeEmail struct {
	User   ModelIdentifier `php:"user"`
	Locale string          `php:"locale"`
	Queueable
}

func (sendWelcomeEmail) PHPClass() string { return `App\Jobs\SendWelcomeEmail` }

type plainJob struct {
	Payload Map               `php:"payload"`
	Secret  string            `php:"secret,protected"`
	Counter int               `php:"counter,private"`
	Dates   Map               `php:"dates"`
	Shared  any               `php:"shared"`
	Refs    map[string]string `php:"refs"`
	Channel *channel          `php:"channel"`
	Ratio   float64           `php:"ratio"`
	Big     int64             `php:"big"`
	Queueable
}

func (plainJob) PHPClass() string { return `App\Jobs\PlainJob` }

func TestLaravelCapturedDecode(t *testing.T) {
	var inputs [][]byte
	var trees []*Value
	for _, name := range laravelCommands {
		data := readLaravel(t, name+".ser")
		v, err := Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := Encode(v)
		if err != nil || !bytes.Equal(out, data) {
			t.Errorf("%s: Encode(Decode(x)) != x (%v)", name, err)
		}
		inputs = append(inputs, data)
		trees = append(trees, v)
	}
	// PHP's view of the same bytes, objects left as written (no class code runs).
	for i, line := range phpUnserialize(t, "raw", inputs...) {
		if e := phpError(line); e != "" {
			t.Fatalf("%s: %s", laravelCommands[i], e)
		}
		got, _ := json.Marshal(canon(trees[i], nil))
		if !jsonEqual(t, got, line) {
			t.Errorf("%s: decoded tree differs from PHP's\n got %s\nwant %s", laravelCommands[i], got, line)
		}
	}
}

func wantPodcastJob(t testing.TB) processPodcast {
	chainQueue := "chain-queue"
	delay := time.Date(2024, 3, 5, 6, 17, 8, 0, time.UTC)
	welcome, err := Marshal(sendWelcomeEmail{User: ModelIdentifier{Class: `App\Models\User`, ID: int64(7), Relations: []string{}}, Locale: "de"})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Marshal(plainJob{Payload: Map{{StrKey("step"), int64(2)}}, Secret: "hidden", Ratio: 1, Big: math.MaxInt64,
		Queueable: Queueable{Queue: ptr("mail")}})
	if err != nil {
		t.Fatal(err)
	}
	return processPodcast{
		Tries: 5, Timeout: 120, Backoff: []int{10, 60, 300}, Score: 0.1,
		Podcast: ModelIdentifier{Class: `App\Models\Podcast`, ID: int64(42), Relations: []string{"episodes", "episodes.guests"}, Connection: ptr("mysql")},
		Options: Map{{StrKey("bitrate"), int64(192)}, {StrKey("normalize"), true}, {StrKey("gain"), -1.5}, {IntKey(3), "three"},
			{StrKey("formats"), []any{"mp3", "ogg"}}, {StrKey("nested"), Map{{StrKey("a"), Map{{StrKey("b"), []any{}}}}}}},
		Title:     `Café Gëöff – 日本 🎧 "quoted"; semi`,
		Tags:      []string{"news", "tech", "émission"},
		Priority:  "High",
		Listeners: ModelIdentifier{Class: `App\Models\User`, ID: []any{int64(7), int64(8)}, Relations: []string{}},
		PublishAt: time.Date(2024, 6, 1, 12, 30, 45, 123456000, mustLoc(t, "Europe/Berlin")),
		Queueable: Queueable{
			Connection: ptr("redis"), Queue: &chainQueue, ChainQueue: &chainQueue, Delay: &delay,
			Middleware: []any{withoutOverlapping{Key: "podcast:42", Prefix: "laravel-queue-overlap:"}},
			Chained:    []string{string(welcome), string(plain)},
		},
	}
}

func TestLaravelUnmarshal(t *testing.T) {
	var got processPodcast
	if err := Unmarshal(readLaravel(t, "podcast_job.ser"), &got); err != nil {
		t.Fatal(err)
	}
	want := wantPodcastJob(t)
	// The middleware and nested option arrays decode generically; compare them on
	// their own.
	mw := got.Middleware
	got.Middleware, want.Middleware = nil, nil
	if nested := got.Options[5].Value; !reflect.DeepEqual(nested, map[string]any{"a": map[string]any{"b": []any{}}}) {
		t.Errorf("nested options = %#v", nested)
	}
	got.Options[5].Value, want.Options[5].Value = nil, nil
	if !got.PublishAt.Equal(want.PublishAt) || got.PublishAt.Location().String() != "Europe/Berlin" {
		t.Errorf("publishAt = %v", got.PublishAt)
	}
	got.PublishAt, want.PublishAt = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
	if o, ok := mw[0].(Object); !ok || o.Class != `Illuminate\Queue\Middleware\WithoutOverlapping` || o.Props["expiresAfter"] != int64(0) {
		t.Errorf("middleware = %#v", mw)
	}
	var team sendWelcomeEmail
	if err := Unmarshal(readLaravel(t, "welcome_email.ser"), &team); err != nil {
		t.Fatal(err)
	}
	if team.User.ID != "team-7f3a" || team.User.Class != `App\Models\Team` {
		t.Errorf("string model key: %+v", team.User)
	}
	var plain plainJob
	if err := Unmarshal(readLaravel(t, "plain_job.ser"), &plain); err != nil {
		t.Fatal(err)
	}
	if plain.Secret != "hidden" || plain.Counter != 3 || plain.Big != math.MinInt64 || *plain.Channel != "Sms" ||
		plain.Refs["a"] != "same" || plain.Refs["b"] != "same" {
		t.Errorf("plain = %+v", plain)
	}
	var dates map[string]time.Time
	v, _ := Decode(readLaravel(t, "plain_job.ser"))
	p, _ := v.Prop("dates")
	if err := p.Decode(&dates); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]time.Time{
		"carbon":    time.Date(2024, 1, 15, 17, 0, 0, 0, time.UTC),
		"immutable": time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC),
		"offset":    time.Date(2024, 1, 15, 10, 0, 0, 500000000, time.UTC),
		"abbr":      time.Date(2024, 7, 15, 10, 0, 0, 0, time.UTC),
	} {
		if !dates[name].Equal(want) {
			t.Errorf("dates[%s] = %v, want %v", name, dates[name], want)
		}
	}
}

// TestLaravelMarshalExact: Go structs written by Marshal are byte for byte what
// Laravel's serialize() wrote, chained jobs included.
func TestLaravelMarshalExact(t *testing.T) {
	out, err := Marshal(wantPodcastJob(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := readLaravel(t, "podcast_job.ser"); !bytes.Equal(out, want) {
		t.Errorf("Marshal differs from Laravel's serialize(): %s", firstDiff(out, want))
	}
	out, err = Marshal(sendWelcomeEmail{User: ModelIdentifier{Class: `App\Models\Team`, ID: "team-7f3a", Relations: []string{}}, Locale: "de"})
	if err != nil {
		t.Fatal(err)
	}
	if want := readLaravel(t, "welcome_email.ser"); !bytes.Equal(out, want) {
		t.Errorf("Marshal differs from Laravel's serialize(): %s", firstDiff(out, want))
	}
}

// firstDiff shows where two byte strings part.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(0, i-40)
	return fmt.Sprintf("at byte %d:\n got …%q…\nwant …%q…", i, got[lo:min(len(got), i+60)], want[lo:min(len(want), i+60)])
}

// TestLaravelMarshalRebuilds has the real Laravel classes unserialize what Go wrote,
// with SerializesModels restoring the models from a database, and compares the jobs
// PHP rebuilt with the ones it rebuilds from its own serialize() output.
func TestLaravelMarshalRebuilds(t *testing.T) {
	var inputs [][]byte
	for _, name := range laravelCommands {
		original := readLaravel(t, name+".ser")
		var job any
		switch name {
		case "podcast_job":
			job = &processPodcast{}
		case "welcome_email":
			job = &sendWelcomeEmail{}
		case "plain_job":
			job = &plainJob{}
		}
		if err := Unmarshal(original, job); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := Marshal(job)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		inputs = append(inputs, original, out)
	}
	lines := phpUnserialize(t, "laravel", inputs...)
	for i := 0; i < len(lines); i += 2 {
		name := laravelCommands[i/2]
		for _, l := range lines[i : i+2] {
			if e := phpError(l); e != "" {
				t.Fatalf("%s: PHP: %s", name, e)
			}
		}
		if !jsonEqual(t, lines[i+1], lines[i]) {
			t.Errorf("%s: PHP rebuilt a different job from Go's bytes\n got %s\nwant %s", name, lines[i+1], lines[i])
		}
	}
}

// TestFixturesUpToDate regenerates every fixture with PHP and fails if a committed
// file differs: the goldens must stay what PHP and Laravel actually write.
func TestFixturesUpToDate(t *testing.T) {
	testenv.NeedPHP(t)
	for _, gen := range []struct{ script, committed string }{
		{testenv.Testdata("phpser", "fixtures", "gen.php"), fixturesDir()},
		{testenv.Testdata("phpser", "capture.php"), laravelDir()},
	} {
		dir := t.TempDir()
		cmd := exec.Command("php", gen.script, dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("php %s: %v\n%s", gen.script, err, out)
		}
		fresh, _ := os.ReadDir(dir)
		committed, _ := os.ReadDir(gen.committed)
		if len(fresh) != len(committed) {
			t.Errorf("%s: %d files generated, %d committed", gen.committed, len(fresh), len(committed))
		}
		for _, f := range fresh {
			a, _ := os.ReadFile(filepath.Join(dir, f.Name()))
			b, err := os.ReadFile(filepath.Join(gen.committed, f.Name()))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s/%s is out of date: regenerate with `php %s %s`", filepath.Base(gen.committed), f.Name(),
					strings.TrimPrefix(gen.script, testenv.RepoRoot()+"/"), strings.TrimPrefix(gen.committed, testenv.RepoRoot()+"/"))
			}
		}
	}
}
