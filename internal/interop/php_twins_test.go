package interop

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"

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
