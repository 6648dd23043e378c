package interop

import (
	"math"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/phpser"
)

type visibilityJob struct {
	Pub  any `php:"pub"`
	Prot any `php:"prot,protected"`
	Priv any `php:"priv,private"`
	laraq.Queueable
}

func (visibilityJob) PHPClass() string { return `App\Jobs\VisibilityJob` }

type address struct {
	Street string    `php:"street"`
	Zip    string    `php:"zip,protected"`
	Geo    []float64 `php:"geo,private"`
}

func (address) PHPClass() string { return `App\Support\Address` }

type nestedJob struct {
	List   []any      `php:"list"`
	Map    phpser.Map `php:"map"`
	Object *address   `php:"object"`
	Deep   any        `php:"deep"`
	Text   string     `php:"text"`
	laraq.Queueable
}

func (nestedJob) PHPClass() string { return `App\Jobs\NestedJob` }

type numbersJob struct {
	NegZero float64   `php:"negZero"`
	Big     float64   `php:"big"`
	Tenth   float64   `php:"tenth"`
	MaxInt  int64     `php:"maxInt"`
	MinInt  int64     `php:"minInt"`
	Floats  []float64 `php:"floats"`
	laraq.Queueable
}

func (numbersJob) PHPClass() string { return `App\Jobs\NumbersJob` }

type modelJob struct {
	User phpser.ModelIdentifier `php:"user"`
	Note string                 `php:"note"`
	laraq.Queueable
}

func (modelJob) PHPClass() string { return `App\Jobs\ModelJob` }

type carbonJob struct {
	When time.Time `php:"when"`
	Date time.Time `php:"date,class=DateTimeImmutable"`
	laraq.Queueable
}

func (carbonJob) PHPClass() string { return `App\Jobs\CarbonJob` }

type enumJob struct {
	Status testkit.Status  `php:"status"`
	Suit   testkit.Suit    `php:"suit"`
	Typed  *testkit.Status `php:"typed"`
	laraq.Queueable
}

func (enumJob) PHPClass() string { return `App\Jobs\EnumJob` }

// reverseTraitsJob is `use Queueable, InteractsWithQueue;`: job comes last.
type reverseTraitsJob struct {
	UserID int64 `php:"userId"`
	laraq.BusQueueable
	laraq.InteractsWithQueue
}

func (reverseTraitsJob) PHPClass() string { return `App\Jobs\ReverseTraitsJob` }

// scripted is App\Jobs\Scripted, as the other suites know it.
type scripted = testkit.ScriptedJob

// shapes returns one job of each shape the tests dispatch, with the canon PHP should
// report for its own properties (the trait properties follow).
type shape struct {
	name string
	job  any
	want []canonProp // own properties as PHP reports them
}

var when = time.Date(2022, 11, 1, 10, 0, 0, 123456000, time.UTC)

func shapes() []shape {
	berlin, _ := time.LoadLocation("Europe/Berlin")
	active := testkit.Status("Active")
	const visClass = `App\Jobs\VisibilityJob`
	return []shape{
		{"plain", testkit.PlainJob{
			Name: "héllo / wörld ✓ \"q\" <tag> & 'apos' \u2028 😀", Count: 42, Ratio: 2.5, Flag: true,
			Tags: []string{"a", "b", ""},
			Meta: phpser.Map{{Key: phpser.StrKey("x"), Value: int64(1)}, {Key: phpser.IntKey(10), Value: "ten"}, {Key: phpser.StrKey("nul\x00byte"), Value: nil}},
		}, []canonProp{
			{"name", cStr("héllo / wörld ✓ \"q\" <tag> & 'apos' \u2028 😀")}, {"count", cInt(42)}, {"ratio", cFloat(2.5)},
			{"flag", cBool(true)}, {"nothing", cNull()}, {"tags", cList(cStr("a"), cStr("b"), cStr(""))},
			{"meta", cArr("x", cInt(1), 10, cStr("ten"), "nul\x00byte", cNull())},
		}},
		{"visibility", visibilityJob{Pub: int64(1), Prot: []any{1.5, "two"}, Priv: map[string]any{"k": true}}, []canonProp{
			{"pub", cInt(1)}, {"\x00*\x00prot", cList(cFloat(1.5), cStr("two"))},
			{"\x00" + visClass + "\x00priv", cArr("k", cBool(true))},
		}},
		{"nested", nestedJob{
			List:   []any{int64(1), []any{int64(2), []any{int64(3), "drei"}}, map[string]any{"a": nil}},
			Map:    phpser.Map{{Key: phpser.StrKey("z"), Value: int64(1)}, {Key: phpser.StrKey("a"), Value: int64(2)}, {Key: phpser.IntKey(-5), Value: "neg"}},
			Object: &address{Street: "Hauptstraße 1", Zip: "10115", Geo: []float64{52.52, 13.405}},
			Deep:   map[string]any{"l1": map[string]any{"l2": map[string]any{"l3": []any{"deep"}}}},
			Text:   "日本語 — Ελληνικά — עברית",
		}, []canonProp{
			{"list", cList(cInt(1), cList(cInt(2), cList(cInt(3), cStr("drei"))), cArr("a", cNull()))},
			{"map", cArr("z", cInt(1), "a", cInt(2), -5, cStr("neg"))},
			{"object", cObj(`App\Support\Address`, canonProp{"street", cStr("Hauptstraße 1")}, canonProp{"\x00*\x00zip", cStr("10115")},
				canonProp{"\x00App\\Support\\Address\x00geo", cList(cFloat(52.52), cFloat(13.405))})},
			{"deep", cArr("l1", cArr("l2", cArr("l3", cList(cStr("deep")))))},
			{"text", cStr("日本語 — Ελληνικά — עברית")},
		}},
		{"numbers", numbersJob{
			NegZero: math.Copysign(0, -1), Big: 1e100, Tenth: 0.1, MaxInt: math.MaxInt64, MinInt: math.MinInt64,
			Floats: []float64{0.1 + 0.2, 5e-324, -1.5, 1e15, 123456789.125, math.MaxFloat64, 1e-7},
		}, []canonProp{
			{"negZero", cFloat(math.Copysign(0, -1))}, {"big", cFloat(1e100)}, {"tenth", cFloat(0.1)},
			{"maxInt", cInt(math.MaxInt64)}, {"minInt", cInt(math.MinInt64)},
			{"floats", cList(cFloat(0.1+0.2), cFloat(5e-324), cFloat(-1.5), cFloat(1e15), cFloat(123456789.125), cFloat(math.MaxFloat64), cFloat(1e-7))},
		}},
		{"model", modelJob{User: phpser.ModelIdentifier{Class: `App\Models\User`, ID: int64(3), Relations: []string{}, Connection: testkit.Str("laraq_models")}, Note: "welcome"},
			[]canonProp{
				{"user", map[string]any{"t": "model", "class": `App\Models\User`, "key": cInt(3),
					"attributes": cArr("id", cInt(3), "name", cStr("user3"), "email", cStr("user3@example.com"))}},
				{"note", cStr("welcome")},
			}},
		{"carbon", carbonJob{When: when, Date: time.Date(2024, 2, 29, 23, 59, 59, 0, berlin)}, []canonProp{
			{"when", cObj(`Illuminate\Support\Carbon`, canonProp{"date", cStr("2022-11-01 10:00:00.123456")},
				canonProp{"timezone_type", cInt(3)}, canonProp{"timezone", cStr("UTC")})},
			{"date", cObj(`DateTimeImmutable`, canonProp{"date", cStr("2024-02-29 23:59:59.000000")},
				canonProp{"timezone_type", cInt(3)}, canonProp{"timezone", cStr("Europe/Berlin")})},
		}},
		{"enum", enumJob{Status: "Suspended", Suit: "Hearts", Typed: &active}, []canonProp{
			{"status", cEnum(`App\Enums\Status:Suspended`)}, {"suit", cEnum(`App\Enums\Suit:Hearts`)},
			{"typed", cEnum(`App\Enums\Status:Active`)},
		}},
	}
}
