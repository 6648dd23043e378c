package phpser

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// invoiceJob declares the class defaults of
//
//	class SendInvoice { use SerializesModels;
//	    public $tries = 3; public $queue; public $middleware = [];
//	    protected $locale = 'en'; public $ratio = 1.0;
//	    private $opts = ['a' => 1, 'b' => [1, 2]];
//	    public function __construct(public int $orderId) {} }
type invoiceJob struct {
	Tries   int            `php:"tries,default=3"`
	Queue   *string        `php:"queue,default=null"`
	MW      []any          `php:"middleware,default=[]"`
	Locale  string         `php:"locale,protected,default=\"en\""`
	Ratio   float64        `php:"ratio,default=1.0"`
	Opts    map[string]any `php:"opts,private,default={\"a\":1,\"b\":[1,2]}"`
	OrderID int            `php:"orderId"`
}

func (invoiceJob) PHPClass() string { return `App\Jobs\SendInvoice` }

func TestDefaultsOfAType(t *testing.T) {
	for _, v := range []any{invoiceJob{}, &invoiceJob{}, (*invoiceJob)(nil)} {
		d, err := Defaults(v)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Encode(d)
		want := `O:20:"App\Jobs\SendInvoice":6:{s:5:"tries";i:3;s:5:"queue";N;s:10:"middleware";a:0:{}` +
			"s:9:\"\x00*\x00locale\";s:2:\"en\";" + `s:5:"ratio";d:1;` +
			"s:26:\"\x00App\\Jobs\\SendInvoice\x00opts\";" + `a:2:{s:1:"a";i:1;s:1:"b";a:2:{i:0;i:1;i:1;i:2;}}}`
		if string(b) != want {
			t.Errorf("Defaults(%T) =\n%q\nwant\n%q", v, b, want)
		}
		if p, ok := d.Prop("tries"); !ok || p.Int() != 3 {
			t.Errorf("tries = %v", p)
		}
	}
	if _, err := Defaults(3); err == nil {
		t.Error("Defaults(3) accepted")
	}
	// Without a class the defaults are an array, keyed as PHP would key it.
	type plain struct {
		N  int `php:"10,default=1"`
		No int `php:"x"`
	}
	d, err := Defaults(plain{})
	if b, _ := Encode(d); err != nil || string(b) != `a:1:{i:10;i:1;}` {
		t.Errorf("class-less: %q %v", b, err)
	}
}

// TestDefaultLiterals: the literal maps to the PHP value the field's Go type holds.
func TestDefaultLiterals(t *testing.T) {
	type withEnum struct {
		S suit `php:"s,default=\"Hearts\""`
	}
	cases := []struct {
		typ  reflect.Type
		lit  string
		want string // serialized default
	}{
		{reflect.TypeFor[int](), "3", "i:3;"},
		{reflect.TypeFor[int8](), "-128", "i:-128;"},
		{reflect.TypeFor[uint16](), "65535", "i:65535;"},
		{reflect.TypeFor[float64](), "3", "d:3;"},
		{reflect.TypeFor[float64](), "1.0", "d:1;"},
		{reflect.TypeFor[float32](), "0.5", "d:0.5;"},
		{reflect.TypeFor[any](), "3", "i:3;"},
		{reflect.TypeFor[any](), "1.0", "d:1;"},
		{reflect.TypeFor[any](), "1e3", "d:1000;"},
		{reflect.TypeFor[any](), "null", "N;"},
		{reflect.TypeFor[any](), `{"a":1,"10":2,"07":3}`, `a:3:{s:1:"a";i:1;i:10;i:2;s:2:"07";i:3;}`},
		{reflect.TypeFor[any](), "{}", "a:0:{}"},
		{reflect.TypeFor[any](), "[]", "a:0:{}"},
		{reflect.TypeFor[*int](), "null", "N;"},
		{reflect.TypeFor[*int](), "3", "i:3;"},
		{reflect.TypeFor[bool](), "true", "b:1;"},
		{reflect.TypeFor[string](), `"a,b"`, `s:3:"a,b";`},
		{reflect.TypeFor[[]byte](), `"raw"`, `s:3:"raw";`},
		{reflect.TypeFor[suit](), `"Spades"`, `E:14:"Fx\Suit:Spades";`},
		{reflect.TypeFor[[]int](), "[]", "a:0:{}"},
		{reflect.TypeFor[[]int](), "{}", "a:0:{}"},
		{reflect.TypeFor[[]float64](), "[1,2]", "a:2:{i:0;d:1;i:1;d:2;}"},
		{reflect.TypeFor[[2]string](), `["a","b"]`, `a:2:{i:0;s:1:"a";i:1;s:1:"b";}`},
		{reflect.TypeFor[map[string]int](), `{"a":1,"b":2}`, `a:2:{s:1:"a";i:1;s:1:"b";i:2;}`},
		{reflect.TypeFor[map[int]string](), `{"-1":"m","5":"f"}`, `a:2:{i:-1;s:1:"m";i:5;s:1:"f";}`},
		{reflect.TypeFor[Map](), `{"b":1,"a":2}`, `a:2:{s:1:"b";i:1;s:1:"a";i:2;}`},
		{reflect.TypeFor[*Value](), `[true]`, `a:1:{i:0;b:1;}`},
		{reflect.TypeFor[selfEncoding](), `"anything"`, `s:8:"anything";`},
	}
	for _, c := range cases {
		v, err := parseDefault(c.typ, c.lit)
		if err != nil {
			t.Errorf("%v default=%s: %v", c.typ, c.lit, err)
			continue
		}
		if b, _ := Encode(v); string(b) != c.want {
			t.Errorf("%v default=%s: %s, want %s", c.typ, c.lit, b, c.want)
		}
	}
	if _, err := getStructInfo(reflect.TypeFor[withEnum]()); err != nil {
		t.Error(err)
	}

	bad := []struct {
		typ reflect.Type
		lit string
		msg string
	}{
		{reflect.TypeFor[int](), "3.0", "a Go int cannot hold the float 3.0"},
		{reflect.TypeFor[int](), "null", "a Go int cannot hold null"},
		{reflect.TypeFor[int8](), "300", "out of range"},
		{reflect.TypeFor[uint](), "-1", "out of range"},
		{reflect.TypeFor[int64](), "9223372036854775808", "out of PHP's int64 range"},
		{reflect.TypeFor[float32](), "0.1", "not exact in a float32"},
		{reflect.TypeFor[bool](), "0", "cannot hold the int 0"},
		{reflect.TypeFor[string](), "null", "cannot hold null"},
		{reflect.TypeFor[suit](), `"not a case"`, "is not a case name of enum Fx\\Suit"},
		{reflect.TypeFor[[]int](), "null", "a Go []int cannot hold null"},
		{reflect.TypeFor[[]int](), `{"a":1}`, "cannot hold an array"},
		{reflect.TypeFor[[]int](), `[1.5]`, "element 0: a Go int cannot hold the float 1.5"},
		{reflect.TypeFor[[2]int](), `[1]`, "Marshal writes all 2 elements"},
		{reflect.TypeFor[map[string]int](), `{"b":1,"a":2}`, "sorted by key"},
		{reflect.TypeFor[map[int]int](), `{"x":1}`, `key "x" is not an int`},
		{reflect.TypeFor[ModelIdentifier](), "null", "never objects; use a pointer with default=null"},
		{reflect.TypeFor[Map](), "null", "Marshal writes a Map as an array"},
		{reflect.TypeFor[error](), "1", "only the empty interface"},
		{reflect.TypeFor[any](), `{"1":1,"01":2,"1":3}`, `duplicate key "1"`},
		{reflect.TypeFor[any](), `{"1":1,"+1":2}`, ""},
		{reflect.TypeFor[any](), `3 4`, "not a single JSON literal"},
		{reflect.TypeFor[any](), `[1,`, "not a JSON literal"},
		{reflect.TypeFor[any](), `tru`, "not a JSON literal"},
		{reflect.TypeFor[any](), `1e999`, "out of range"},
	}
	for _, c := range bad {
		_, err := parseDefault(c.typ, c.lit)
		if c.msg == "" {
			if err != nil {
				t.Errorf("%v default=%s: %v", c.typ, c.lit, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%v default=%s: %v, want %q", c.typ, c.lit, err, c.msg)
		}
	}
}

type badDefault struct {
	Tries int `php:"tries,default=3.5"`
}

func (badDefault) PHPClass() string { return `App\Jobs\Bad` }

// TestBadDefaultIsAnErrorEverywhere: a literal the field cannot hold stops Marshal,
// Unmarshal and Defaults with the same error, naming the struct type and field.
func TestBadDefaultIsAnErrorEverywhere(t *testing.T) {
	const want = "phpser: field Tries of phpser.badDefault: default=3.5: a Go int cannot hold the float 3.5"
	_, err1 := Marshal(badDefault{})
	_, err2 := Encoder{OmitDefaults: true}.Marshal(&badDefault{})
	err3 := Unmarshal([]byte(`O:12:"App\Jobs\Bad":0:{}`), &badDefault{})
	_, err4 := Defaults(badDefault{})
	var holder struct{ Jobs []badDefault }
	err5 := Unmarshal([]byte(`a:1:{s:4:"Jobs";a:1:{i:0;O:12:"App\Jobs\Bad":0:{}}}`), &holder)
	for i, err := range []error{err1, err2, err3, err4, err5} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%d: %v, want %q", i+1, err, want)
		}
	}
	type tagErrs struct {
		A struct {
			X int `php:"x,default="`
		}
		B struct {
			X []Entry `php:",rest,default=[]"`
		}
		C struct {
			X int `php:"default=3"`
		}
		D struct {
			badDefault `php:",default=null"`
		}
	}
	for i, typ := range []reflect.Type{reflect.TypeOf(tagErrs{}.A), reflect.TypeOf(tagErrs{}.B), reflect.TypeOf(tagErrs{}.C), reflect.TypeOf(tagErrs{}.D)} {
		_, err := getStructInfo(typ)
		msgs := []string{"the literal is missing", "cannot have a default", "needs the property name first", "belongs on the fields of the embedded struct"}
		if err == nil || !strings.Contains(err.Error(), msgs[i]) {
			t.Errorf("%v: %v, want %q", typ, err, msgs[i])
		}
	}
}

// TestUnmarshalFillsDefaults: a property the stream leaves out gets its declared
// default, as PHP's object creation gives it; one it has keeps its value.
func TestUnmarshalFillsDefaults(t *testing.T) {
	j := invoiceJob{Tries: 99, Queue: ptr("stale"), Locale: "stale", OrderID: 1}
	if err := Unmarshal([]byte(`O:20:"App\Jobs\SendInvoice":2:{s:7:"orderId";i:7;s:5:"ratio";d:2.5;}`), &j); err != nil {
		t.Fatal(err)
	}
	want := invoiceJob{Tries: 3, MW: []any{}, Locale: "en", Ratio: 2.5, Opts: map[string]any{"a": int64(1), "b": []any{int64(1), int64(2)}}, OrderID: 7}
	if !reflect.DeepEqual(j, want) {
		t.Errorf("got  %#v\nwant %#v", j, want)
	}
	// Each value gets its own copy of a default: changing one changes no other.
	j.Opts["a"] = "changed"
	var k invoiceJob
	if err := Unmarshal([]byte(`O:20:"App\Jobs\SendInvoice":0:{}`), &k); err != nil || k.Opts["a"] != int64(1) {
		t.Errorf("defaults shared between values: %v %v", k.Opts, err)
	}
	// An array has no class and so no defaults; null is the zero value as before.
	var a invoiceJob
	if err := Unmarshal([]byte(`a:1:{s:7:"orderId";i:7;}`), &a); err != nil || !reflect.DeepEqual(a, invoiceJob{OrderID: 7}) {
		t.Errorf("array: %#v %v", a, err)
	}
	// Embedded structs keep their fields' defaults, through pointers too.
	type Retries struct {
		Times int `php:"retryTimes,default=2"`
	}
	type outer struct {
		*Retries
		Delay int `php:"delay,default=10"`
	}
	var o outer
	if err := Unmarshal([]byte(`O:1:"X":0:{}`), &o); err != nil || o.Retries == nil || o.Times != 2 || o.Delay != 10 {
		t.Errorf("embedded: %+v %v", o, err)
	}
	// A default the field's Unmarshaler refuses is reported with the field.
	type picky struct {
		P pickyValue `php:"p,default=1"`
	}
	if err := Unmarshal([]byte(`O:1:"X":0:{}`), &picky{}); err == nil || !strings.Contains(err.Error(), "default of phpser.picky.p") {
		t.Errorf("picky: %v", err)
	}
}

type pickyValue struct{}

func (*pickyValue) UnmarshalPHP(*Value) error { return errors.New("no thanks") }

func TestEncoderOmitDefaults(t *testing.T) {
	enc := Encoder{OmitDefaults: true}
	cases := []struct {
		job  invoiceJob
		want string
	}{
		// Everything at its default but the promoted orderId, as 9.4+ writes new SendInvoice(7).
		{invoiceJob{Tries: 3, Locale: "en", Ratio: 1, OrderID: 7, Opts: map[string]any{"a": 1, "b": []int{1, 2}}},
			`O:20:"App\Jobs\SendInvoice":1:{s:7:"orderId";i:7;}`},
		// -0.0 === 0.0 in PHP; a Go nil slice is written as [] and so is the default.
		{invoiceJob{Tries: 3, Locale: "en", Ratio: 1, OrderID: 7, MW: nil, Opts: map[string]any{"a": int64(1), "b": []any{1, 2}}},
			`O:20:"App\Jobs\SendInvoice":1:{s:7:"orderId";i:7;}`},
		{invoiceJob{Tries: 5, Queue: ptr(""), Locale: "de", Ratio: math.Copysign(1, -1), OrderID: 7, Opts: map[string]any{"a": 1.0, "b": []int{1, 2}}},
			`O:20:"App\Jobs\SendInvoice":6:{s:5:"tries";i:5;s:5:"queue";s:0:"";s:9:"` + "\x00*\x00" + `locale";s:2:"de";s:5:"ratio";d:-1;` +
				`s:26:"` + "\x00App\\Jobs\\SendInvoice\x00" + `opts";a:2:{s:1:"a";d:1;s:1:"b";a:2:{i:0;i:1;i:1;i:2;}}s:7:"orderId";i:7;}`},
	}
	for i, c := range cases {
		b, err := enc.Marshal(c.job)
		if err != nil || string(b) != c.want {
			t.Errorf("%d: %q %v\nwant %q", i, b, err, c.want)
		}
	}
	// -0.0 is identical to a 0.0 default, NaN to nothing.
	type floats struct {
		Z float64 `php:"z,default=0.0"`
		N float64 `php:"n,default=0.0"`
	}
	b, err := enc.Marshal(floats{Z: math.Copysign(0, -1), N: math.NaN()})
	if err != nil || string(b) != `a:1:{s:1:"n";d:NAN;}` && string(b) != `a:2:{s:1:"z";d:-0;s:1:"n";d:NAN;}` {
		t.Errorf("floats: %q %v", b, err)
	}
}

// omitted is written by SerializesModels; its nested objects by PHP's native serialize.
type omitted struct {
	Tries int    `php:"tries,default=3"`
	Inner inner  `php:"inner"`
	Deep  *model `php:"deep,default=null"`
}

func (omitted) PHPClass() string { return `App\Jobs\Outer` }

type inner struct {
	N int `php:"n,default=1"`
}

func (inner) PHPClass() string { return `App\Inner` }

type model struct {
	N int `php:"n,default=1"`
}

func (model) PHPClass() string          { return `App\Mailable` }
func (model) PHPSerializesModels() bool { return true }

type nativeJob struct {
	Tries int `php:"tries,default=3"`
}

func (nativeJob) PHPClass() string          { return `App\Jobs\Native` }
func (nativeJob) PHPSerializesModels() bool { return false }

func TestEncoderOmitDefaultsWhere(t *testing.T) {
	enc := Encoder{OmitDefaults: true}
	b, err := enc.Marshal(&omitted{Tries: 3, Inner: inner{N: 1}, Deep: &model{N: 1}})
	want := `O:14:"App\Jobs\Outer":2:{s:5:"inner";O:9:"App\Inner":1:{s:1:"n";i:1;}s:4:"deep";O:12:"App\Mailable":0:{}}`
	if err != nil || string(b) != want {
		t.Errorf("nested: %q %v\nwant %q", b, err, want)
	}
	if b, err := enc.Marshal(nativeJob{Tries: 3}); err != nil || string(b) != `O:15:"App\Jobs\Native":1:{s:5:"tries";i:3;}` {
		t.Errorf("root that says it is native: %q %v", b, err)
	}
	// Inside a list the job is nested: written whole.
	if b, err := enc.Marshal([]omitted{{Tries: 3}}); err != nil || !strings.Contains(string(b), `s:5:"tries";i:3;`) {
		t.Errorf("in a list: %q %v", b, err)
	}
}

func TestEncoderZeroMeansDefault(t *testing.T) {
	both := Encoder{ZeroMeansDefault: true, OmitDefaults: true}
	zero := Encoder{ZeroMeansDefault: true}
	full, _ := Defaults(invoiceJob{})
	fb, _ := Encode(full)
	b, err := zero.Marshal(invoiceJob{OrderID: 7})
	if want := strings.TrimSuffix(string(fb), "}") + `s:7:"orderId";i:7;}`; err != nil || string(b) != strings.Replace(want, ":6:{", ":7:{", 1) {
		t.Errorf("zero: %q %v\nwant %q", b, err, want)
	}
	b, err = both.Marshal(invoiceJob{OrderID: 7})
	if err != nil || string(b) != `O:20:"App\Jobs\SendInvoice":1:{s:7:"orderId";i:7;}` {
		t.Errorf("both: %q %v", b, err)
	}
	// A pointer tells "not set" from the zero value.
	type ptrs struct {
		Tries *int `php:"tries,default=3"`
	}
	for _, c := range []struct {
		v    ptrs
		want string
	}{{ptrs{}, `a:1:{s:5:"tries";i:3;}`}, {ptrs{ptr(0)}, `a:1:{s:5:"tries";i:0;}`}} {
		if b, err := zero.Marshal(c.v); err != nil || string(b) != c.want {
			t.Errorf("%+v: %q %v", c.v, b, err)
		}
	}
	// omitempty still leaves a zero field out.
	type oe struct {
		Tries int `php:"tries,omitempty,default=3"`
	}
	if b, err := zero.Marshal(oe{}); err != nil || string(b) != `a:0:{}` {
		t.Errorf("omitempty: %q %v", b, err)
	}
	// Without options nothing changes.
	if b, err := Marshal(invoiceJob{OrderID: 7}); err != nil || !strings.Contains(string(b), `s:5:"tries";i:0;`) {
		t.Errorf("Marshal: %q %v", b, err)
	}
}

func TestIdenticalIsPHPIdentity(t *testing.T) {
	same := [][2]*Value{
		{Float(0), Float(math.Copysign(0, -1))},
		{NewArray(StrEntry("5", Int(1))), NewArray(IntEntry(5, Int(1)))},
		{List(Null(), String("a")), List(Null(), String("a"))},
	}
	for _, p := range same {
		if !identical(p[0], p[1]) {
			t.Errorf("%v !== %v", p[0], p[1])
		}
	}
	differ := [][2]*Value{
		{Float(math.NaN()), Float(math.NaN())},
		{Int(1), Float(1)},
		{List(Int(1), Int(2)), NewArray(IntEntry(1, Int(2)), IntEntry(0, Int(1)))},
		{NewArray(StrEntry("05", Int(1))), NewArray(IntEntry(5, Int(1)))},
		{NewObject("A"), NewObject("A")},
		{NewRef(1), NewRef(1)},
	}
	for _, p := range differ {
		if identical(p[0], p[1]) {
			t.Errorf("%v === %v", p[0], p[1])
		}
	}
	if !identicalBytes([]byte("i:+5;"), []byte("i:5;"), Int(5)) || identicalBytes([]byte("a:1:{i:0;i:1;}"), []byte("a:0:{}"), NewArray()) {
		t.Error("identicalBytes")
	}
}

// TestDefaultNodesAreNotShared: a *Value field filled with its default gets a node of
// its own, so changing it leaves the type's default alone.
func TestDefaultNodesAreNotShared(t *testing.T) {
	type raw struct {
		V *Value `php:"v,default=[1]"`
	}
	var a raw
	if err := Unmarshal([]byte(`O:1:"X":0:{}`), &a); err != nil {
		t.Fatal(err)
	}
	a.V.Append(IntEntry(1, Int(2)))
	var b raw
	if err := Unmarshal([]byte(`O:1:"X":0:{}`), &b); err != nil || b.V.Len() != 1 {
		t.Errorf("default changed through a decoded field: %v %v", b.V, err)
	}
}
