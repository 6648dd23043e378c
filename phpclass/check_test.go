package phpclass_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/phpclass"
)

// Hand-written types of App\Jobs\Classes\UniquePropJob (ShouldBeUnique, SerializesModels:
// public $uniqueId; public $uniqueFor = 30; public $orderId; Queueable), one right and one
// per mistake a person makes.

type uniqueRight struct {
	ID      any `php:"uniqueId,default=null"`
	For     int `php:"uniqueFor,default=30"`
	OrderID any `php:"orderId,default=null"`
	laraq.Queueable
}

func (uniqueRight) PHPClass() string           { return `App\Jobs\Classes\UniquePropJob` }
func (j uniqueRight) UniqueID() string         { return "x" }
func (j uniqueRight) UniqueFor() time.Duration { return 30 * time.Second }

type uniqueMisspelt struct {
	ID      any `php:"uniqueId,default=null"`
	For     int `php:"uniqueFor,default=30"`
	OrderID any `php:"ordreId,default=null"`
	laraq.Queueable
}

func (uniqueMisspelt) PHPClass() string           { return `App\Jobs\Classes\UniquePropJob` }
func (j uniqueMisspelt) UniqueID() string         { return "x" }
func (j uniqueMisspelt) UniqueFor() time.Duration { return 0 }

type uniqueMissing struct {
	ID  any `php:"uniqueId,default=null"`
	For int `php:"uniqueFor,default=30"`
	laraq.Queueable
}

func (uniqueMissing) PHPClass() string           { return `App\Jobs\Classes\UniquePropJob` }
func (j uniqueMissing) UniqueID() string         { return "x" }
func (j uniqueMissing) UniqueFor() time.Duration { return 0 }

// uniqueLeftOut leaves orderId out on purpose.
type uniqueLeftOut uniqueMissing

func (uniqueLeftOut) PHPClass() string           { return `App\Jobs\Classes\UniquePropJob` }
func (j uniqueLeftOut) UniqueID() string         { return "x" }
func (j uniqueLeftOut) UniqueFor() time.Duration { return 0 }
func (uniqueLeftOut) PHPUnmapped() []string      { return []string{"orderId"} }

type uniqueCase struct {
	ID      any `php:"uniqueId,default=null"`
	For     int `php:"uniqueFor,default=30"`
	OrderID any `php:"orderID,default=null"`
	laraq.Queueable
}

func (uniqueCase) PHPClass() string           { return `App\Jobs\Classes\UniquePropJob` }
func (j uniqueCase) UniqueID() string         { return "x" }
func (j uniqueCase) UniqueFor() time.Duration { return 0 }

type uniqueDefault struct {
	ID      any `php:"uniqueId,default=null"`
	For     int `php:"uniqueFor,default=60"`
	OrderID any `php:"orderId"`
	laraq.Queueable
}

func (uniqueDefault) PHPClass() string           { return `App\Jobs\Classes\UniquePropJob` }
func (j uniqueDefault) UniqueID() string         { return "x" }
func (j uniqueDefault) UniqueFor() time.Duration { return 0 }

type uniqueVisibility struct {
	ID      any `php:"uniqueId,default=null"`
	For     int `php:"uniqueFor,protected,default=30"`
	OrderID any `php:"orderId,default=null"`
	laraq.Queueable
}

func (uniqueVisibility) PHPClass() string           { return `App\Jobs\Classes\UniquePropJob` }
func (j uniqueVisibility) UniqueID() string         { return "x" }
func (j uniqueVisibility) UniqueFor() time.Duration { return 0 }

// uniqueNotSaid forgets that the class is ShouldBeUnique.
type uniqueNotSaid struct {
	ID      any `php:"uniqueId,default=null"`
	For     int `php:"uniqueFor,default=30"`
	OrderID any `php:"orderId,default=null"`
	laraq.Queueable
}

func (uniqueNotSaid) PHPClass() string { return `App\Jobs\Classes\UniquePropJob` }

// uniqueOrder has the right fields in another order.
type uniqueOrder struct {
	OrderID any `php:"orderId,default=null"`
	ID      any `php:"uniqueId,default=null"`
	For     int `php:"uniqueFor,default=30"`
	laraq.Queueable
}

func (uniqueOrder) PHPClass() string           { return `App\Jobs\Classes\UniquePropJob` }
func (j uniqueOrder) UniqueID() string         { return "x" }
func (j uniqueOrder) UniqueFor() time.Duration { return 0 }

// uniqueNoQueueable maps the class's own properties but not Bus\Queueable's.
type uniqueNoQueueable struct {
	ID      any `php:"uniqueId,default=null"`
	For     int `php:"uniqueFor,default=30"`
	OrderID any `php:"orderId,default=null"`
	laraq.InteractsWithQueue
}

func (uniqueNoQueueable) PHPClass() string           { return `App\Jobs\Classes\UniquePropJob` }
func (j uniqueNoQueueable) UniqueID() string         { return "x" }
func (j uniqueNoQueueable) UniqueFor() time.Duration { return 0 }

// App\Jobs\Classes\EncryptedJob: ShouldBeEncrypted, SerializesModels; public $card,
// protected $cvc.

type encryptedNotSaid struct {
	Card any `php:"card,default=null"`
	Cvc  any `php:"cvc,protected,default=null"`
	laraq.Queueable
}

func (encryptedNotSaid) PHPClass() string { return `App\Jobs\Classes\EncryptedJob` }

// App\Jobs\Classes\NativeJob: no SerializesModels, no traits; public $a, protected $b = 2,
// private $c = 'c'.

type nativeSaysModels struct {
	A any    `php:"a,default=null"`
	B int    `php:"b,protected,default=2"`
	C string `php:"c,private,default=\"c\""`
}

func (nativeSaysModels) PHPClass() string { return `App\Jobs\Classes\NativeJob` }

type nativeTyped struct {
	A any    `php:"a,default=null"`
	B int    `php:"b,protected,default=2"`
	C string `php:"c,private,default=\"c\""`
	laraq.Queueable
}

func (nativeTyped) PHPClass() string          { return `App\Jobs\Classes\NativeJob` }
func (nativeTyped) PHPSerializesModels() bool { return false }

// App\Jobs\Classes\KitchenSinkJob: typed properties.
type sinkWrongTypes struct {
	Count string            `php:"count,default=\"3\""` // public int $count = 3
	Ratio float64           `php:"ratio,default=1"`     // the float 1.0 where PHP's default is 1.5
	Rest  []laraq.Queueable `php:"-"`
}

func (sinkWrongTypes) PHPClass() string { return `App\Jobs\Classes\KitchenSinkJob` }

// problems checks type t against class and returns its problems as text.
func problems(t *testing.T, m *phpclass.Manifest, class string, typ reflect.Type) []phpclass.Problem {
	t.Helper()
	c := m.Class(`App\Jobs\Classes\` + class)
	if c == nil {
		t.Fatalf("no class %s", class)
	}
	return phpclass.Check(c, typ)
}

// TestCheckNamesEachMistake: every mistake the issue lists (misspelt, missing, case,
// default, visibility, a unique or encrypted class not said so) and the others Check
// knows are one problem naming the class, the property and the fix; the right type has
// none, and CheckTypes refuses only what is not a warning.
func TestCheckNamesEachMistake(t *testing.T) {
	m := fixture(t, "L13")
	type want struct {
		kind string
		says []string
	}
	for _, c := range []struct {
		name  string
		class string
		typ   reflect.Type
		want  []want
	}{
		{"right", "UniquePropJob", reflect.TypeFor[uniqueRight](), nil},
		{"misspelt", "UniquePropJob", reflect.TypeFor[uniqueMisspelt](), []want{
			{phpclass.ProblemUnknown, []string{"$ordreId", "no property $ordreId", "Go field OrderID", "correct the name"}},
			{phpclass.ProblemUnmapped, []string{`App\Jobs\Classes\UniquePropJob $orderId`, "OrderID *phpser.Value `php:\"orderId,default=null\"`"}}}},
		{"missing", "UniquePropJob", reflect.TypeFor[uniqueMissing](), []want{
			{phpclass.ProblemUnmapped, []string{`App\Jobs\Classes\UniquePropJob $orderId`, "add the field OrderID *phpser.Value `php:\"orderId,default=null\"`"}}}},
		{"left out on purpose", "UniquePropJob", reflect.TypeFor[uniqueLeftOut](), nil},
		{"case", "UniquePropJob", reflect.TypeFor[uniqueCase](), []want{
			{phpclass.ProblemCase, []string{"$orderId", "$orderID", "in case only", "`php:\"orderId\"`"}}}},
		{"default", "UniquePropJob", reflect.TypeFor[uniqueDefault](), []want{
			{phpclass.ProblemDefault, []string{"$uniqueFor", "default=60", "i:30;", "write default=30"}},
			{phpclass.ProblemDefault, []string{"$orderId", "N;", "add default=null"}}}},
		{"visibility", "UniquePropJob", reflect.TypeFor[uniqueVisibility](), []want{
			{phpclass.ProblemVisibility, []string{"$uniqueFor", "protected", "public", "`php:\"uniqueFor\"`"}}}},
		{"unique", "UniquePropJob", reflect.TypeFor[uniqueNotSaid](), []want{
			{phpclass.ProblemUnique, []string{"ShouldBeUnique", "UniqueID() string", "UniqueFor() time.Duration"}}}},
		{"order", "UniquePropJob", reflect.TypeFor[uniqueOrder](), []want{
			{phpclass.ProblemOrder, []string{"$uniqueId, $uniqueFor, $orderId"}}}},
		{"queueable", "UniquePropJob", reflect.TypeFor[uniqueNoQueueable](), []want{
			{phpclass.ProblemQueueable, []string{"Illuminate\\Bus\\Queueable", "$connection", "embed laraq.Queueable"}}}},
		{"encrypted", "EncryptedJob", reflect.TypeFor[encryptedNotSaid](), []want{
			{phpclass.ProblemEncrypted, []string{"ShouldBeEncrypted", "func (encryptedNotSaid) ShouldBeEncrypted() {}"}}}},
		{"serializes models", "NativeJob", reflect.TypeFor[nativeSaysModels](), []want{
			{phpclass.ProblemSerializesModels, []string{"does not use SerializesModels", "PHPSerializesModels() bool { return false }"}}}},
		{"queueable for a class without it", "NativeJob", reflect.TypeFor[nativeTyped](), []want{
			{phpclass.ProblemQueueable, []string{"does not use Illuminate\\Queue\\InteractsWithQueue"}},
			{phpclass.ProblemQueueable, []string{"does not use Illuminate\\Bus\\Queueable"}}}},
	} {
		got := problems(t, m, c.class, c.typ)
		if len(got) != len(c.want) {
			t.Errorf("%s: %d problems, want %d:\n%s", c.name, len(got), len(c.want), text(got))
			continue
		}
		for i, w := range c.want {
			if got[i].Kind != w.kind {
				t.Errorf("%s: problem %d is a %s, want a %s: %s", c.name, i, got[i].Kind, w.kind, got[i])
			}
			for _, say := range w.says {
				if !strings.Contains(got[i].String(), say) {
					t.Errorf("%s: problem %d %q does not say %q", c.name, i, got[i].String(), say)
				}
			}
		}
	}

	types := map[string]reflect.Type{
		`App\Jobs\Classes\UniquePropJob`: reflect.TypeFor[uniqueOrder](),
		`App\Jobs\Classes\NativeJob`:     reflect.TypeFor[nativeSaysModels](),
		`App\Jobs\Gone`:                  reflect.TypeFor[uniqueRight](),
	}
	err := phpclass.CheckTypes(m, types)
	ce, ok := err.(*phpclass.CheckError)
	if !ok || len(ce.Problems) != 2 {
		t.Fatalf("CheckTypes: %v, want the SerializesModels mistake and the unknown class (the order is a warning)", err)
	}
	if !strings.Contains(err.Error(), `App\Jobs\Gone: the manifest has no such class`) || !strings.Contains(err.Error(), "PHPSerializesModels") {
		t.Errorf("CheckTypes: %v", err)
	}
	if err := phpclass.CheckTypes(m, map[string]reflect.Type{`App\Jobs\Classes\UniquePropJob`: reflect.TypeFor[uniqueOrder]()}); err != nil {
		t.Errorf("a warning alone refuses: %v", err)
	}
}

// TestCheckTypesOfProperties: a Go type that cannot hold the PHP type, a default of
// another PHP type (1 is not 1.5; a float field's 1 is the float 1.0, never PHP's int).
func TestCheckTypesOfProperties(t *testing.T) {
	m := fixture(t, "L13")
	got := problems(t, m, "KitchenSinkJob", reflect.TypeFor[sinkWrongTypes]())
	var found []string
	for _, p := range got {
		if p.Property == "count" || p.Property == "ratio" {
			found = append(found, p.Kind+" "+p.Property)
		}
	}
	want := []string{"default count", "type count", "default ratio"}
	if strings.Join(found, ",") != strings.Join(want, ",") {
		t.Errorf("problems of count and ratio: %v, want %v\n%s", found, want, text(got))
	}
	for _, p := range got {
		if p.Property == "count" && p.Kind == phpclass.ProblemType && !strings.Contains(p.String(), "make the field a int") {
			t.Errorf("type fix: %s", p)
		}
	}
}

func text(ps []phpclass.Problem) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.Kind + ": " + p.String() + "\n")
	}
	return b.String()
}
