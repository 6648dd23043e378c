package matrix

import (
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpser"
)

// Go twins of the classes of testdata/php/jobs.php and jobs_matrix.php as an application
// would write them for the release matrix: every property with its PHP class default
// (`public $x;` is default=null, so a nil value is left out by SerializesModels on 9.4+
// as PHP leaves out a null), PHPSerializesModels false where the class does not use
// SerializesModels, the class's methods and 13.x attributes as Go methods.

// matrixNow is the clock of every matrix test, PHP's (--now) and Go's.
var matrixNow = time.Unix(testenv.CaptureNow, 0).UTC()

type mxPlain struct {
	Name    any `php:"name,default=null"`
	Count   any `php:"count,default=null"`
	Ratio   any `php:"ratio,default=null"`
	Flag    any `php:"flag,default=null"`
	Nothing any `php:"nothing,default=null"`
	Tags    any `php:"tags,default=null"`
	Meta    any `php:"meta,default=null"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxPlain) PHPClass() string { return `App\Jobs\PlainJob` }

type mxVisibility struct { // uses SerializesModels
	Pub  any `php:"pub,default=null"`
	Prot any `php:"prot,protected,default=null"`
	Priv any `php:"priv,private,default=null"`
	laraq.Queueable
}

func (mxVisibility) PHPClass() string { return `App\Jobs\VisibilityJob` }

type mxAddress struct {
	Street string    `php:"street"`
	Zip    string    `php:"zip,protected"`
	Geo    []float64 `php:"geo,private"`
}

func (mxAddress) PHPClass() string { return `App\Support\Address` }

type mxNested struct {
	List   []any      `php:"list"`
	Map    phpser.Map `php:"map"`
	Object *mxAddress `php:"object"`
	Deep   any        `php:"deep"`
	Text   string     `php:"text"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxNested) PHPClass() string { return `App\Jobs\NestedJob` }

type mxNumbers struct {
	NegZero float64   `php:"negZero"`
	Big     float64   `php:"big"`
	Tenth   float64   `php:"tenth"`
	MaxInt  int64     `php:"maxInt"`
	MinInt  int64     `php:"minInt"`
	Floats  []float64 `php:"floats"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxNumbers) PHPClass() string { return `App\Jobs\NumbersJob` }

type mxCarbon struct {
	When *time.Time `php:"when,default=null"`
	Date *time.Time `php:"date,class=DateTimeImmutable,default=null"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxCarbon) PHPClass() string { return `App\Jobs\CarbonJob` }

type mxEnum struct {
	Status *testkit.Status `php:"status,default=null"`
	Suit   *testkit.Suit   `php:"suit,default=null"`
	Typed  *testkit.Status `php:"typed,default=null"` // public ?Status $typed = null;
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxEnum) PHPClass() string { return `App\Jobs\EnumJob` }

type mxReverse struct { // use Queueable, InteractsWithQueue
	UserID any `php:"userId,default=null"`
	laraq.BusQueueable
	laraq.InteractsWithQueue
	testkit.NotSerializesModels
}

func (mxReverse) PHPClass() string { return `App\Jobs\ReverseTraitsJob` }

type mxMeta struct {
	Tries         any `php:"tries,default=null"`
	MaxExceptions any `php:"maxExceptions,default=null"`
	Backoff       any `php:"backoff,default=null"`
	Timeout       any `php:"timeout,default=null"`
	FailOnTimeout any `php:"failOnTimeout,default=null"`
	RetryUntil    any `php:"retryUntil,default=null"`
	Label         any `php:"label,default=null"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxMeta) PHPClass() string { return `App\Jobs\MetaJob` }

type mxNamed struct {
	Name any `php:"name,default=null"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxNamed) PHPClass() string { return `App\Jobs\NamedJob` }

// DisplayName is NamedJob's displayName(): "Named: " . $this->name.
func (j mxNamed) DisplayName() string {
	s, _ := j.Name.(string)
	return "Named: " + s
}

type mxMetaDefaults struct {
	Tries         int   `php:"tries,default=4"`
	Backoff       []int `php:"backoff,default=[3,10]"`
	Timeout       int   `php:"timeout,default=30"`
	MaxExceptions int   `php:"maxExceptions,default=2"`
	FailOnTimeout bool  `php:"failOnTimeout,default=true"`
	Label         any   `php:"label,default=null"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxMetaDefaults) PHPClass() string { return `App\Jobs\Matrix\MetaDefaultsJob` }

// RetryUntil is retryUntil(): now + 100 years.
func (mxMetaDefaults) RetryUntil() time.Time { return matrixNow.AddDate(100, 0, 0) }

type mxMetaMethods struct {
	Label any `php:"label,default=null"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxMetaMethods) PHPClass() string      { return `App\Jobs\Matrix\MetaMethodsJob` }
func (mxMetaMethods) Backoff() []int        { return []int{1, 5, 10} }
func (mxMetaMethods) RetryUntil() time.Time { return matrixNow.AddDate(50, 0, 0) }

// mxRetryAfter uses 5.8–7.x's names for the retry delay and the expiry.
type mxRetryAfter struct {
	RetryAfter int        `php:"retryAfter,default=7"`
	TimeoutAt  *time.Time `php:"timeoutAt,default=null"`
	Label      any        `php:"label,default=null"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxRetryAfter) PHPClass() string { return `App\Jobs\Matrix\RetryAfterJob` }

type mxRetryAfterMethod struct {
	Label any `php:"label,default=null"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxRetryAfterMethod) PHPClass() string      { return `App\Jobs\Matrix\RetryAfterMethodJob` }
func (mxRetryAfterMethod) RetryAfter() int       { return 4 }
func (mxRetryAfterMethod) RetryUntil() time.Time { return matrixNow.AddDate(10, 0, 0) }

type mxAttributeMeta struct {
	Label any `php:"label,default=null"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxAttributeMeta) PHPClass() string { return `App\Jobs\Matrix\AttributeMetaJob` }
func (mxAttributeMeta) PHPAttributes() laraq.Attributes {
	five, fortyFive, three := 5, 45, 3
	return laraq.Attributes{Tries: &five, Backoff: []int{2, 4}, Timeout: &fortyFive, MaxExceptions: &three, FailOnTimeout: true}
}

type mxTriesMethod struct {
	Label any `php:"label,default=null"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxTriesMethod) PHPClass() string { return `App\Jobs\Matrix\TriesMethodJob` }
func (mxTriesMethod) Tries() int       { return 6 }

type mxMethodsOverride struct {
	TriesProp   int   `php:"tries,default=2"`
	BackoffProp []int `php:"backoff,default=[9]"`
	Label       any   `php:"label,default=null"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxMethodsOverride) PHPClass() string { return `App\Jobs\Matrix\MethodsOverrideJob` }
func (mxMethodsOverride) Tries() int       { return 7 }
func (mxMethodsOverride) Backoff() []int   { return []int{1, 2} }

type mxAttributeOver struct {
	Tries int `php:"tries,default=3"`
	Label any `php:"label,default=null"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxAttributeOver) PHPClass() string { return `App\Jobs\Matrix\AttributeOverJob` }
func (mxAttributeOver) PHPAttributes() laraq.Attributes {
	five := 5
	return laraq.Attributes{Tries: &five}
}

type mxModels struct { // uses SerializesModels
	User  *phpser.ModelIdentifier `php:"user,default=null"`
	Users *phpser.ModelIdentifier `php:"users,default=null"`
	Note  any                     `php:"note,default=null"`
	laraq.Queueable
}

func (mxModels) PHPClass() string { return `App\Jobs\Matrix\ModelsJob` }

// mxStub is the 11.x make:job stub: use Illuminate\Foundation\Queue\Queueable (which
// brings SerializesModels), public $tries = 3, then constructor-promoted typed
// properties, which have no class default.
type mxStub struct {
	Tries int                    `php:"tries,default=3"`
	User  phpser.ModelIdentifier `php:"user"`
	Note  string                 `php:"note"`
	Count int                    `php:"count,protected"`
	laraq.Queueable
}

func (mxStub) PHPClass() string { return `App\Jobs\Matrix\StubJob` }

type mxBatched struct { // use Batchable, InteractsWithQueue, Queueable, SerializesModels
	N         any     `php:"n,default=null"`
	BatchID   *string `php:"batchId,default=null"`
	FakeBatch any     `php:"fakeBatch,private,default=null"` // Batchable's private $fakeBatch (9.x+)
	laraq.Queueable
}

func (mxBatched) PHPClass() string { return `App\Jobs\Matrix\BatchedJob` }

// mxBatched8 is BatchedJob on 8.83, whose Batchable has no $fakeBatch.
type mxBatched8 struct {
	N       any     `php:"n,default=null"`
	BatchID *string `php:"batchId,default=null"`
	laraq.Queueable
}

func (mxBatched8) PHPClass() string { return `App\Jobs\Matrix\BatchedJob` }

type mxUnique struct {
	OrderID   any `php:"orderId,default=null"`
	UniqueFor int `php:"uniqueFor,default=60"`
	laraq.Queueable
	testkit.NotSerializesModels
}

func (mxUnique) PHPClass() string { return `App\Jobs\Matrix\UniqueJob` }

// Framework classes PHP queues for listeners, notifications, mail and broadcasts: the
// properties a Go handler would read.

type mxListener struct {
	Class  string `php:"class"`
	Method string `php:"method"`
	Data   []any  `php:"data"`
	Tries  any    `php:"tries"`
}

type mxNotification struct {
	Notifiables  phpser.ModelIdentifier `php:"notifiables"`
	Notification any                    `php:"notification"`
	Channels     []string               `php:"channels"`
}

type mxMail struct {
	Mailable any `php:"mailable"`
}

type mxBroadcast struct {
	Event any `php:"event"`
}
