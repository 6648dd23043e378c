package laraq_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpser"
	laravelpayloads "github.com/laraq/laraq/testdata/laravel-payloads"
)

// Go twins of the PHP classes in testdata/php/jobs.php and jobs_consumer.php.

type wPlainJob struct {
	Name    string     `php:"name"`
	Count   int64      `php:"count"`
	Ratio   float64    `php:"ratio"`
	Flag    bool       `php:"flag"`
	Nothing *string    `php:"nothing"`
	Tags    []string   `php:"tags"`
	Meta    phpser.Map `php:"meta"`
	laraq.Queueable
}

type wVisibilityJob struct {
	Pub  string `php:"pub"`
	Prot int64  `php:"prot"`
	Priv []any  `php:"priv"`
	laraq.Queueable
}

type wAddress struct {
	Street string    `php:"street"`
	Zip    string    `php:"zip"`
	Geo    []float64 `php:"geo"`
}

type wNestedJob struct {
	List   []any      `php:"list"`
	Map    phpser.Map `php:"map"`
	Object *wAddress  `php:"object"`
	Deep   any        `php:"deep"`
	Text   string     `php:"text"`
	laraq.Queueable
}

type wNumbersJob struct {
	NegZero float64   `php:"negZero"`
	Big     float64   `php:"big"`
	Tenth   float64   `php:"tenth"`
	MaxInt  int64     `php:"maxInt"`
	MinInt  int64     `php:"minInt"`
	Floats  []float64 `php:"floats"`
	laraq.Queueable
}

type wModelJob struct {
	User phpser.ModelIdentifier `php:"user"`
	Note string                 `php:"note"`
	laraq.Queueable
}

type wCarbonJob struct {
	When time.Time `php:"when"`
	Date time.Time `php:"date"`
	laraq.Queueable
}

type wStatus string

func (wStatus) PHPClass() string { return `App\Enums\Status` }

type wEnumJob struct {
	Status wStatus  `php:"status"`
	Suit   string   `php:"suit"`
	Typed  *wStatus `php:"typed"`
	laraq.Queueable
}

type wNamedJob struct {
	Name string `php:"name"`
	laraq.Queueable
}

type scriptedJob struct {
	Actions       []string `php:"actions"`
	Tag           any      `php:"tag"`
	Tries         any      `php:"tries"`
	MaxExceptions any      `php:"maxExceptions"`
	Backoff       any      `php:"backoff"`
	Timeout       any      `php:"timeout"`
	FailOnTimeout any      `php:"failOnTimeout"`
	RetryUntil    any      `php:"retryUntil"`
	laraq.Queueable
}

// s7: a Horizon + Telescope payload with a batch id, enums, a whole Eloquent model and a
// reference (r:78).
type uploadPlatform struct {
	CreatorID int64     `php:"creator_id"`
	VideoID   int64     `php:"video_id"`
	UploadDTO uploadDTO `php:"uploadDTO"`
	Platform  string    `php:"platform"`
	BatchID   string    `php:"batchId"`
	laraq.Queueable
}

type uploadDTO struct {
	VideoID       int64    `php:"video_id"`
	VideoPath     string   `php:"video_path"`
	Title         string   `php:"title"`
	Description   string   `php:"description"`
	Tags          []string `php:"tags"`
	Category      category `php:"category"`
	ThumbnailPath string   `php:"thumbnail_path"`
	CreatorID     string   `php:"creator_id"`
	Platforms     []string `php:"platforms"`
	Audience      string   `php:"audience"`
	Visibility    string   `php:"visibility"`
	PublishTime   *string  `php:"publish_time"`
}

type category struct {
	Table      string         `php:"table"`
	Exists     bool           `php:"exists"`
	Attributes map[string]any `php:"attributes"`
	Guarded    []string       `php:"guarded"`
}

// s8: Horizon's minimal job.
type testJob struct {
	laraq.Queueable
}

// s11: a failed_jobs payload of a timed-out job with retryUntil.
type articlesTotalLoader struct {
	Tries         int64         `php:"tries"`
	RetryAfter    int64         `php:"retry_after"`
	Query         autopartQuery `php:"query"`
	UniqueFor     int64         `php:"uniqueFor"`
	AbcpService   any           `php:"abcpService"`
	RequestLogger any           `php:"request_logger"`
	APIClient     any           `php:"api_client"`
	laraq.Queueable
}

type autopartQuery struct {
	Fillable   []string       `php:"fillable"`
	Attributes map[string]any `php:"attributes"`
	Number     string         `php:"number"`
	Brand      string         `php:"brand"`
}

// phpRecord is one line a PHP test job appended to LARAQ_RECORD.
type phpRecord struct {
	Kind     string  `json:"kind"`
	Event    string  `json:"event"`
	Class    string  `json:"class"`
	Method   string  `json:"method"`
	ID       *string `json:"id"`
	UUID     *string `json:"uuid"`
	Attempts int     `json:"attempts"`
	Queue    string  `json:"queue"`
	Conn     string  `json:"connection"`
	Name     string  `json:"name"`
	Raw      string  `json:"raw"`
	Action   string  `json:"action"`
	Props    []prop  `json:"props"`
	Data     canon   `json:"data"`
}

func readRecords(t testing.TB, file string) []phpRecord {
	t.Helper()
	return testenv.ReadJSONLines[phpRecord](t, file)
}

// dispatched is one line of dispatch.php's output.
type dispatched struct {
	ID      *string  `json:"id"`
	Payload string   `json:"payload"`
	Queue   string   `json:"queue"`
	Delayed bool     `json:"delayed"`
	Score   *float64 `json:"score"`
	Error   string   `json:"error"`
}

// phpDispatch sends requests (JSON lines) through Laravel's Bus and RedisQueue.
func phpDispatch(t testing.TB, env testenv.PHPEnv, args []string, requests ...string) []dispatched {
	t.Helper()
	out := env.Run(t, []byte(strings.Join(requests, "\n")+"\n"), "dispatch.php", args...)
	var res []dispatched
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var d dispatched
		if err := json.Unmarshal(line, &d); err != nil || d.Error != "" {
			t.Fatalf("dispatch.php: %s (%v)", line, err)
		}
		res = append(res, d)
	}
	if len(res) != len(requests) {
		t.Fatalf("dispatch.php answered %d lines for %d requests", len(res), len(requests))
	}
	return res
}

// runWorker runs work.php (Laravel's own Worker, like queue:work) and returns its output.
func runWorker(t testing.TB, env testenv.PHPEnv, timeout time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	base := env.Command("work.php", args...)
	cmd := exec.CommandContext(ctx, base.Path, base.Args[1:]...)
	cmd.Env = env.Environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("work.php %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func recordFile(t testing.TB) string { return filepath.Join(t.TempDir(), "records.jsonl") }

// readSample returns a real payload of testdata/laravel-payloads by file name ("S7.json"),
// matched without regard to case.
func readSample(t testing.TB, name string) []byte {
	t.Helper()
	id := strings.TrimSuffix(name, filepath.Ext(name))
	for _, have := range laravelpayloads.IDs() {
		if strings.EqualFold(have, id) {
			id = have
			break
		}
	}
	b, err := laravelpayloads.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jsonString quotes s for a request line.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
