package testkit

import (
	"testing"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/encryption"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpser"
)

// Go twins of the PHP classes in testdata/php/jobs.php.

// PlainJob is App\Jobs\PlainJob: scalars, null, a list and a map.
type PlainJob struct {
	Name    string     `php:"name"`
	Count   int64      `php:"count"`
	Ratio   float64    `php:"ratio"`
	Flag    bool       `php:"flag"`
	Nothing *string    `php:"nothing"`
	Tags    []string   `php:"tags"`
	Meta    phpser.Map `php:"meta"`
	laraq.Queueable
}

func (PlainJob) PHPClass() string { return `App\Jobs\PlainJob` }

// Status is the backed enum App\Enums\Status.
type Status string

func (Status) PHPClass() string { return `App\Enums\Status` }

// Suit is the pure enum App\Enums\Suit.
type Suit string

func (Suit) PHPClass() string { return `App\Enums\Suit` }

// ChainStep is App\Jobs\ChainStep, one step of a Bus::chain.
type ChainStep struct {
	Step int `php:"step"`
	laraq.Queueable
}

func (ChainStep) PHPClass() string { return `App\Jobs\ChainStep` }

// MetaJob is App\Jobs\MetaJob, whose tries, backoff, timeout and the like are properties.
type MetaJob struct {
	Tries         any    `php:"tries"`
	MaxExceptions any    `php:"maxExceptions"`
	Backoff       any    `php:"backoff"`
	Timeout       any    `php:"timeout"`
	FailOnTimeout any    `php:"failOnTimeout"`
	RetryUntil    any    `php:"retryUntil"`
	Label         string `php:"label"`
	laraq.Queueable
}

func (MetaJob) PHPClass() string { return `App\Jobs\MetaJob` }

// NamedJob is App\Jobs\NamedJob, with its own displayName().
type NamedJob struct {
	Name string `php:"name"`
	laraq.Queueable
}

func (NamedJob) PHPClass() string { return `App\Jobs\NamedJob` }

// DisplayName is the name Laravel shows for the job (NamedJob::displayName()).
func (j NamedJob) DisplayName() string { return "Named: " + j.Name }

// Str is a pointer to s.
func Str(s string) *string { return &s }

// NotSerializesModels marks a matrix job whose PHP class does not use SerializesModels.
type NotSerializesModels struct{}

func (NotSerializesModels) PHPSerializesModels() bool { return false }

// MxModel is App\Jobs\ModelJob of the matrix: an Eloquent model and a note.
type MxModel struct { // uses SerializesModels
	User *phpser.ModelIdentifier `php:"user,default=null"`
	Note any                     `php:"note,default=null"`
	laraq.Queueable
}

func (MxModel) PHPClass() string { return `App\Jobs\ModelJob` }

// MxChainStep is App\Jobs\ChainStep of the matrix.
type MxChainStep struct {
	Step any `php:"step,default=null"`
	laraq.Queueable
	NotSerializesModels
}

func (MxChainStep) PHPClass() string { return `App\Jobs\ChainStep` }

// MxDefaults is App\Jobs\Matrix\DefaultsJob: properties with class defaults.
type MxDefaults struct { // uses SerializesModels
	Tries   int    `php:"tries,default=3"`
	Label   any    `php:"label,default=\"default\""`
	Count   int    `php:"count,default=0"`
	Changed any    `php:"changed,default=null"`
	Secret  string `php:"secret,protected,default=\"keep\""`
	Hidden  []int  `php:"hidden,private,default=[1]"`
	laraq.Queueable
}

func (MxDefaults) PHPClass() string { return `App\Jobs\Matrix\DefaultsJob` }

// WChainStep is jobs.php's App\Jobs\ChainStep, which records every run.
type WChainStep struct {
	Step int `php:"step"`
	laraq.Queueable
}

func (WChainStep) PHPClass() string { return `App\Jobs\ChainStep` }

// SecretJob is App\Jobs\Matrix\SecretJob of jobs_matrix.php: ShouldBeEncrypted, one
// public property.
type SecretJob struct {
	Secret string `php:"secret"`
	laraq.Queueable
}

func (SecretJob) PHPClass() string   { return `App\Jobs\Matrix\SecretJob` }
func (SecretJob) ShouldBeEncrypted() {}

// CaptureEncrypter is an encrypter with the app key the captured payloads were encrypted with.
func CaptureEncrypter(t testing.TB) *encryption.Encrypter {
	t.Helper()
	key, err := encryption.ParseKey(testenv.CaptureAppKey)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := encryption.New(key, encryption.DefaultCipher)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

// ModelID is a ModelIdentifier of App\Models\User with key id.
func ModelID(id any) *phpser.ModelIdentifier {
	return &phpser.ModelIdentifier{Class: `App\Models\User`, ID: id, Relations: []string{}, Connection: Str("laraq_models")}
}
