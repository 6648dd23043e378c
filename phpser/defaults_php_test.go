package phpser

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// The Go twins of testdata/phpser/defaults/classes.php. Field order is the order of
// ReflectionClass::getProperties(), which SerializesModels walks: the class's own
// properties (constructor-promoted ones after the declared ones), then those it
// inherits, then those of its traits. A parent's private properties are not listed,
// so SerializesModels never writes them and the structs leave them out.

type tone string

func (tone) PHPClass() string { return `App\Enums\Tone` }

type allTypes struct {
	Untyped  any     `php:"untyped,default=null"`
	Tries    int     `php:"tries,default=3"`
	Loose    any     `php:"loose,default=3"`
	Ratio    float64 `php:"ratio,default=1.5"`
	Timeout  float64 `php:"timeout,default=60"`
	Zero     any     `php:"zero,default=0.0"`
	Flag     bool    `php:"flag,default=false"`
	Maybe    *bool   `php:"maybe,default=true"`
	Name     string  `php:"name,default=\"default-name\""`
	Empty    string  `php:"empty,default=\"\""`
	List     []any   `php:"list,default=[1,2,3]"`
	Map      Map     `php:"map,default={\"a\":1,\"b\":[true,null],\"7\":\"seven\"}"`
	None     []any   `php:"none,default=[]"`
	Tone     tone    `php:"tone,default=\"Warm\""`
	Nullable *string `php:"nullable,default=null"`
	Big      int64   `php:"big,default=9223372036854775807"`
	Negative any     `php:"negative,default=-42"`
}

func (allTypes) PHPClass() string { return `App\Jobs\AllTypes` }

type promoted struct {
	Count   *int    `php:"count,omitempty"` // typed without a default: nil is uninitialized
	Label   string  `php:"label,default=\"x\""`
	OrderID int     `php:"orderId"`           // typed promoted: no default
	Note    any     `php:"note,default=null"` // untyped promoted: null
	Ref     *string `php:"ref,protected"`     // typed promoted: no default
	Items   []any   `php:"items,private"`     // typed promoted: no default
}

func (promoted) PHPClass() string { return `App\Jobs\Promoted` }

type baseJob struct {
	BaseProt string `php:"baseProt,protected,default=\"base\""`
	BasePub  int    `php:"basePub,default=1"`
}

// hasRetries has no PHPClass: a trait's private property belongs to the class using it.
type hasRetries struct {
	RetryTimes int   `php:"retryTimes,default=2"`
	RetryDelay int   `php:"retryDelay,protected,default=10"`
	RetryLog   []any `php:"retryLog,private,default=[]"`
}

type visibility struct {
	Secret  string `php:"secret,protected,default=\"p\""`
	Counter int    `php:"counter,private,default=0"`
	baseJob
	hasRetries
}

func (visibility) PHPClass() string { return `App\Jobs\Visibility` }

// interactsWithQueue and the busQueueable* structs are the queue traits' properties
// with the defaults each release declares.
type interactsWithQueue struct {
	Job any `php:"job,default=null"`
}

// protectedJob is InteractsWithQueue before 7.7: a protected job.
type protectedJob struct {
	Job any `php:"job,protected,default=null"`
}

type busQueueable5 struct { // 5.8
	Connection      *string  `php:"connection,default=null"`
	Queue           *string  `php:"queue,default=null"`
	ChainConnection *string  `php:"chainConnection,default=null"`
	ChainQueue      *string  `php:"chainQueue,default=null"`
	Delay           any      `php:"delay,default=null"`
	Chained         []string `php:"chained,default=[]"`
}

type busQueueable6 struct { // 6.x-7.x
	Connection      *string  `php:"connection,default=null"`
	Queue           *string  `php:"queue,default=null"`
	ChainConnection *string  `php:"chainConnection,default=null"`
	ChainQueue      *string  `php:"chainQueue,default=null"`
	Delay           any      `php:"delay,default=null"`
	Middleware      []any    `php:"middleware,default=[]"`
	Chained         []string `php:"chained,default=[]"`
}

type modernJob5 struct {
	Tries   int `php:"tries,default=3"`
	OrderID int `php:"orderId"`
	protectedJob
	busQueueable5
}

func (modernJob5) PHPClass() string { return `App\Jobs\ModernJob` }

type modernJob6 struct {
	Tries   int `php:"tries,default=3"`
	OrderID int `php:"orderId"`
	protectedJob
	busQueueable6
}

func (modernJob6) PHPClass() string { return `App\Jobs\ModernJob` }

type modernJob7 struct {
	Tries   int `php:"tries,default=3"`
	OrderID int `php:"orderId"`
	interactsWithQueue
	busQueueable6
}

func (modernJob7) PHPClass() string { return `App\Jobs\ModernJob` }

type busQueueable8 struct { // 8.x-11.1
	Connection          *string  `php:"connection,default=null"`
	Queue               *string  `php:"queue,default=null"`
	ChainConnection     *string  `php:"chainConnection,default=null"`
	ChainQueue          *string  `php:"chainQueue,default=null"`
	ChainCatchCallbacks any      `php:"chainCatchCallbacks,default=null"`
	Delay               any      `php:"delay,default=null"`
	AfterCommit         *bool    `php:"afterCommit,default=null"`
	Middleware          []any    `php:"middleware,default=[]"`
	Chained             []string `php:"chained,default=[]"`
}

type busQueueable11 struct { // 11.2-12.26
	Connection          *string  `php:"connection,default=null"`
	Queue               *string  `php:"queue,default=null"`
	Delay               any      `php:"delay,default=null"`
	AfterCommit         *bool    `php:"afterCommit,default=null"`
	Middleware          []any    `php:"middleware,default=[]"`
	Chained             []string `php:"chained,default=[]"`
	ChainConnection     *string  `php:"chainConnection,default=null"`
	ChainQueue          *string  `php:"chainQueue,default=null"`
	ChainCatchCallbacks any      `php:"chainCatchCallbacks,default=null"`
}

type busQueueable12 struct { // 12.32+ (messageGroup 12.28.1+, deduplicator 12.32+)
	Connection          *string  `php:"connection,default=null"`
	Queue               *string  `php:"queue,default=null"`
	MessageGroup        *string  `php:"messageGroup,default=null"`
	Deduplicator        any      `php:"deduplicator,default=null"`
	Delay               any      `php:"delay,default=null"`
	AfterCommit         *bool    `php:"afterCommit,default=null"`
	Middleware          []any    `php:"middleware,default=[]"`
	Chained             []string `php:"chained,default=[]"`
	ChainConnection     *string  `php:"chainConnection,default=null"`
	ChainQueue          *string  `php:"chainQueue,default=null"`
	ChainCatchCallbacks any      `php:"chainCatchCallbacks,default=null"`
}

type busQueueable13 struct { // 13.24+
	Connection          *string  `php:"connection,default=null"`
	Queue               *string  `php:"queue,default=null"`
	MessageGroup        *string  `php:"messageGroup,default=null"`
	Deduplicator        any      `php:"deduplicator,default=null"`
	DebounceOwner       string   `php:"debounceOwner,default=\"\""`
	UniqueLockOwner     string   `php:"uniqueLockOwner,default=\"\""`
	Delay               any      `php:"delay,default=null"`
	AfterCommit         *bool    `php:"afterCommit,default=null"`
	Middleware          []any    `php:"middleware,default=[]"`
	Chained             []string `php:"chained,default=[]"`
	ChainConnection     *string  `php:"chainConnection,default=null"`
	ChainQueue          *string  `php:"chainQueue,default=null"`
	ChainCatchCallbacks any      `php:"chainCatchCallbacks,default=null"`
}

type modernJob8 struct {
	Tries   int `php:"tries,default=3"`
	OrderID int `php:"orderId"`
	interactsWithQueue
	busQueueable8
}

func (modernJob8) PHPClass() string { return `App\Jobs\ModernJob` }

type modernJob11 struct {
	Tries   int `php:"tries,default=3"`
	OrderID int `php:"orderId"`
	interactsWithQueue
	busQueueable11
}

func (modernJob11) PHPClass() string { return `App\Jobs\ModernJob` }

type modernJob12 struct {
	Tries   int `php:"tries,default=3"`
	OrderID int `php:"orderId"`
	interactsWithQueue
	busQueueable12
}

func (modernJob12) PHPClass() string { return `App\Jobs\ModernJob` }

type modernJob13 struct {
	Tries   int `php:"tries,default=3"`
	OrderID int `php:"orderId"`
	interactsWithQueue
	busQueueable13
}

func (modernJob13) PHPClass() string { return `App\Jobs\ModernJob` }

// modelIdentifier926 is ModelIdentifier as 9.26+ writes it: collectionClass always
// there, null for a model or a plain collection (ModelIdentifier leaves a nil one out,
// as 8.x writes it).
type modelIdentifier926 struct {
	Class           string   `php:"class"`
	ID              any      `php:"id"`
	Relations       []string `php:"relations"`
	Connection      *string  `php:"connection"`
	CollectionClass *string  `php:"collectionClass"`
}

func (modelIdentifier926) PHPClass() string { return ModelIdentifierClass }

type withModel[M any] struct {
	Team      *M `php:"team,default=null"`
	User      M  `php:"user"`
	Optional  *M `php:"optional"`               // typed promoted: no default
	MaybeUser *M `php:"maybeUser,default=null"` // untyped promoted: null
}

func (withModel[M]) PHPClass() string { return `App\Jobs\WithModel` }

// defaultCase is one state of defaults/run.php: the Go value and whether it is built
// with zero values standing for the class defaults (ZeroMeansDefault), as `new X()`.
type defaultCase struct {
	v    any
	zero bool
}

func defaultCases(major int) map[string]defaultCase {
	user := func(id any) ModelIdentifier {
		return ModelIdentifier{Class: `App\Models\User`, ID: id, Relations: []string{}, Connection: ptr("default")}
	}
	var withOne, withAll any
	if major >= 9 { // 9.26+
		user926 := func(id any) modelIdentifier926 {
			u := user(id)
			return modelIdentifier926{Class: u.Class, ID: u.ID, Relations: u.Relations, Connection: u.Connection}
		}
		withOne = withModel[modelIdentifier926]{Team: ptr(user926([]any{int64(1), int64(2)})), User: user926(int64(1))}
		withAll = withModel[modelIdentifier926]{User: user926(int64(1)), Optional: ptr(user926(int64(2))), MaybeUser: ptr(user926(int64(3)))}
	} else {
		withOne = withModel[ModelIdentifier]{Team: ptr(user([]any{int64(1), int64(2)})), User: user(int64(1))}
		withAll = withModel[ModelIdentifier]{User: user(int64(1)), Optional: ptr(user(int64(2))), MaybeUser: ptr(user(int64(3)))}
	}
	var modernDefaults, modernQueued any
	switch {
	case major >= 13:
		modernDefaults = modernJob13{OrderID: 1}
		modernQueued = modernJob13{Tries: 5, OrderID: 2, busQueueable13: busQueueable13{Connection: ptr("redis"), Queue: ptr("emails"), Delay: 30, ChainQueue: ptr("chain-q")}}
	case major >= 12:
		modernDefaults = modernJob12{OrderID: 1}
		modernQueued = modernJob12{Tries: 5, OrderID: 2, busQueueable12: busQueueable12{Connection: ptr("redis"), Queue: ptr("emails"), Delay: 30, ChainQueue: ptr("chain-q")}}
	case major >= 11:
		modernDefaults = modernJob11{OrderID: 1}
		modernQueued = modernJob11{Tries: 5, OrderID: 2, busQueueable11: busQueueable11{Connection: ptr("redis"), Queue: ptr("emails"), Delay: 30, ChainQueue: ptr("chain-q")}}
	case major >= 8:
		modernDefaults = modernJob8{OrderID: 1}
		modernQueued = modernJob8{Tries: 5, OrderID: 2, busQueueable8: busQueueable8{Connection: ptr("redis"), Queue: ptr("emails"), Delay: 30, ChainQueue: ptr("chain-q")}}
	case major == 7:
		modernDefaults = modernJob7{OrderID: 1}
		modernQueued = modernJob7{Tries: 5, OrderID: 2, busQueueable6: busQueueable6{Connection: ptr("redis"), Queue: ptr("emails"), Delay: 30, ChainQueue: ptr("chain-q")}}
	case major == 6:
		modernDefaults = modernJob6{OrderID: 1}
		modernQueued = modernJob6{Tries: 5, OrderID: 2, busQueueable6: busQueueable6{Connection: ptr("redis"), Queue: ptr("emails"), Delay: 30, ChainQueue: ptr("chain-q")}}
	default:
		modernDefaults = modernJob5{OrderID: 1}
		modernQueued = modernJob5{Tries: 5, OrderID: 2, busQueueable5: busQueueable5{Connection: ptr("redis"), Queue: ptr("emails"), Delay: 30, ChainQueue: ptr("chain-q")}}
	}
	defaultMap := Map{{StrKey("a"), int64(1)}, {StrKey("b"), []any{true, nil}}, {IntKey(7), "seven"}}
	return map[string]defaultCase{
		"alltypes_defaults": {allTypes{}, true},
		"alltypes_changed": {allTypes{Untyped: 0, Tries: 5, Loose: 3.0, Ratio: 1.5, Timeout: 30, Zero: math.Copysign(0, -1),
			Flag: true, Maybe: nil, Name: "default-name", Empty: "0", List: []any{1, 2, 3},
			Map:  Map{{StrKey("b"), []any{true, nil}}, {StrKey("a"), 1}, {IntKey(7), "seven"}},
			None: []any{}, Tone: "Cold", Nullable: ptr("set"), Big: math.MaxInt64, Negative: -42}, false},
		"alltypes_types": {allTypes{Untyped: false, Tries: 3, Loose: "3", Ratio: 1.5, Timeout: 60, Zero: 0, Maybe: ptr(true),
			Name: "default-name", List: []any{1.0, 2, 3}, Map: defaultMap, None: []any{nil}, Tone: "Warm",
			Big: math.MaxInt64 - 1, Negative: -42.0}, false},
		"promoted_uninitialized": {promoted{OrderID: 7}, true},
		"promoted_set":           {promoted{Count: ptr(2), Label: "x", OrderID: 7, Note: "n", Ref: ptr("r"), Items: []any{"x"}}, false},
		"promoted_zero":          {promoted{Count: ptr(0), Label: "y", Items: []any{}}, false},
		"visibility_defaults":    {visibility{}, true},
		"visibility_changed": {visibility{Secret: "q", Counter: 1, baseJob: baseJob{BaseProt: "base", BasePub: 2},
			hasRetries: hasRetries{RetryTimes: 5, RetryDelay: 10, RetryLog: []any{"a"}}}, false},
		"modern_defaults": {modernDefaults, true},
		"modern_queued":   {modernQueued, true},
		"model_one":       {withOne, false},
		"model_all":       {withAll, false},
	}
}

type phpDefaultsLine struct {
	Name  string `json:"name"`
	Ser   string `json:"ser"`
	Full  string `json:"full"`
	Error string `json:"error"`
}

// serializeFails are the states a release's SerializesModels cannot serialize: why, and
// what PHP throws. 5.8's __sleep predates typed properties (PHP 7.4): it reads every
// property and writes the ModelIdentifier back into it; 6.x serializes through
// __serialize instead.
var serializeFails = map[int]map[string][2]string{
	5: {
		"promoted_uninitialized": {"5.8's SerializesModels::__sleep reads an uninitialized typed property", "must not be accessed before initialization"},
		"model_one":              {"5.8's SerializesModels::__sleep puts a ModelIdentifier into a property typed User", "Cannot assign Illuminate\\Contracts\\Database\\ModelIdentifier"},
		"model_all":              {"5.8's SerializesModels::__sleep puts a ModelIdentifier into a property typed User", "Cannot assign Illuminate\\Contracts\\Database\\ModelIdentifier"},
	},
}

// runDefaultsPHP runs testdata/phpser/defaults/run.php with the SerializesModels of one
// release: Debian's 8.83 for major 8, the peers' trees for the others.
func runDefaultsPHP(t *testing.T, major int) []phpDefaultsLine {
	t.Helper()
	testenv.NeedPHP(t)
	cmd := exec.Command("php", testenv.Testdata("phpser", "defaults", "run.php"))
	if major != 8 {
		harness := filepath.Join(testenv.LaravelPeerDir(), "harness")
		_, err := os.Stat(filepath.Join(harness, "autoload.php"))
		testenv.Need(t, err == nil, "the Laravel peers' harness: %v", err)
		cmd.Env = append(os.Environ(), "LARAQ_PEER_MAJOR="+strconv.Itoa(major), "LARAQ_PEERS_DIR="+testenv.PeersDir(t),
			"LARAQ_PEER_HARNESS="+harness)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("php defaults/run.php (Laravel %d): %v\n%s", major, err, stderr.String())
	}
	var lines []phpDefaultsLine
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var l phpDefaultsLine
		if err := dec.Decode(&l); err != nil {
			t.Fatalf("%v in %s", err, out)
		}
		lines = append(lines, l)
	}
	return lines
}

// TestClassDefaultsMatchLaravel proves the class-defaults support against the real
// SerializesModels of every release: for each class and state of defaults/run.php,
//   - Encoder writes exactly PHP's bytes: everything up to 8.x (5.8-7.x and Debian's 8.83
//     omit nothing, so the bytes are Marshal's as before), defaults left out on 9.4+;
//   - Unmarshal of PHP's bytes gives the object PHP's unserialize() rebuilds, class
//     defaults included: written back whole, it is PHP's own full view of it.
func TestClassDefaultsMatchLaravel(t *testing.T) {
	for _, major := range testenv.Majors {
		t.Run("laravel-"+strconv.Itoa(major), func(t *testing.T) {
			lines := runDefaultsPHP(t, major)
			cases := defaultCases(major)
			if len(lines) != len(cases) {
				t.Fatalf("PHP wrote %d states, the test knows %d", len(lines), len(cases))
			}
			omits := major >= 9 // SerializesModels omits defaults from 9.4.0
			for _, l := range lines {
				c, ok := cases[l.Name]
				if !ok {
					t.Fatalf("no Go twin for %s", l.Name)
				}
				if f, fails := serializeFails[major][l.Name]; fails || l.Error != "" {
					if !fails || !strings.Contains(l.Error, f[1]) {
						t.Errorf("%s: Laravel %d: serialize() %q; expected to fail: %q", l.Name, major, l.Error, f[0])
					} else {
						t.Logf("%s skipped: %s (%s)", l.Name, f[0], l.Error)
					}
					continue
				}
				ser, _ := base64.StdEncoding.DecodeString(l.Ser)
				full, _ := base64.StdEncoding.DecodeString(l.Full)
				// The premise: up to 8.x every property is written, 9.4+ leaves the defaults out.
				if omits == bytes.Equal(ser, full) && (!omits || strings.HasSuffix(l.Name, "_defaults")) {
					t.Errorf("%s: Laravel %d wrote %q, the full state is %q", l.Name, major, ser, full)
				}
				got, err := Encoder{OmitDefaults: omits, ZeroMeansDefault: c.zero}.Marshal(c.v)
				if err != nil || !bytes.Equal(got, ser) {
					t.Errorf("%s: Go wrote\n%q (%v)\nPHP wrote\n%q", l.Name, got, err, ser)
				}
				if !c.zero && !omits {
					// Without options, today's Marshal writes what 8.x writes.
					if got, _ := Marshal(c.v); !bytes.Equal(got, ser) {
						t.Errorf("%s: Marshal changed: %q", l.Name, got)
					}
				}

				back := reflect.New(reflect.TypeOf(c.v))
				if err := Unmarshal(ser, back.Interface()); err != nil {
					t.Errorf("%s: Unmarshal: %v", l.Name, err)
					continue
				}
				whole, err := Marshal(back.Elem().Interface())
				if err != nil || !bytes.Equal(whole, full) {
					t.Errorf("%s: Go's Unmarshal rebuilt\n%q (%v)\nPHP's unserialize() rebuilt\n%q", l.Name, whole, err, full)
				}
			}
		})
	}
}
