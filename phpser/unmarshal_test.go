package phpser

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixturesDir(), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Queueable mirrors the properties Laravel 8's Queueable and InteractsWithQueue traits
// add to every job, in the order PHP writes them.
type Queueable struct {
	Job                 any        `php:"job"`
	Connection          *string    `php:"connection"`
	Queue               *string    `php:"queue"`
	ChainConnection     *string    `php:"chainConnection"`
	ChainQueue          *string    `php:"chainQueue"`
	ChainCatchCallbacks any        `php:"chainCatchCallbacks"`
	Delay               *time.Time `php:"delay"`
	AfterCommit         *bool      `php:"afterCommit"`
	Middleware          []any      `php:"middleware"`
	Chained             []string   `php:"chained"`
}

// fixturePodcast is App\Jobs\ProcessPodcast of the fixtures' stub classes.
type fixturePodcast struct {
	Tries         int              `php:"tries"`
	Timeout       int              `php:"timeout"`
	Backoff       []int            `php:"backoff"`
	MaxExceptions int              `php:"maxExceptions"`
	Score         float64          `php:"score"`
	Podcast       ModelIdentifier  `php:"podcast,protected"`
	Owner         *ModelIdentifier `php:"owner,protected"`
	Options       Map              `php:"options,private"`
	Title         string           `php:"title"`
	Tags          []string         `php:"tags"`
	Flags         Map              `php:"flags"`
	Queueable
}

func (fixturePodcast) PHPClass() string { return `App\Jobs\ProcessPodcast` }

func ptr[T any](v T) *T { return &v }

func TestUnmarshalLaravelJob(t *testing.T) {
	data := readFixture(t, "laravel_job.ser")
	var job fixturePodcast
	if err := Unmarshal(data, &job); err != nil {
		t.Fatal(err)
	}
	if job.Tries != 5 || job.Timeout != 120 || !reflect.DeepEqual(job.Backoff, []int{10, 60, 300}) || job.Score != 0.1 {
		t.Errorf("scalars: %+v", job)
	}
	wantPodcast := ModelIdentifier{Class: `App\Models\Podcast`, ID: int64(42), Relations: []string{"episodes", "episodes.guests"}, Connection: ptr("mysql")}
	if !reflect.DeepEqual(job.Podcast, wantPodcast) {
		t.Errorf("protected podcast = %+v", job.Podcast)
	}
	if job.Owner == nil || job.Owner.ID != int64(7) || job.Owner.Connection != nil || len(job.Owner.Relations) != 0 {
		t.Errorf("owner = %+v", job.Owner)
	}
	wantOptions := Map{{StrKey("bitrate"), int64(192)}, {StrKey("normalize"), true}, {StrKey("gain"), -1.5},
		{IntKey(3), "three"}, {StrKey("formats"), []any{"mp3", "ogg"}}}
	if !reflect.DeepEqual(job.Options, wantOptions) {
		t.Errorf("private options = %#v", job.Options)
	}
	if job.Title != `Café Gëöff – 日本 🎧 "quoted"; semi` || job.Tags[2] != "émission" {
		t.Errorf("strings: %q %q", job.Title, job.Tags)
	}
	if *job.Connection != "redis" || *job.Queue != "podcasts" || job.ChainQueue != nil {
		t.Errorf("queueable: %v %v", *job.Connection, *job.Queue)
	}
	if !job.Delay.Equal(time.Date(2024, 3, 5, 6, 7, 8, 0, time.UTC)) || job.Delay.Location() != time.UTC {
		t.Errorf("delay = %v", job.Delay)
	}
	mw, ok := job.Middleware[0].(Object)
	if !ok || mw.Class != `Illuminate\Queue\Middleware\WithoutOverlapping` || mw.Props["key"] != "podcast:42" {
		t.Errorf("middleware = %#v", job.Middleware)
	}
	// Chained jobs are serialized strings; each decodes on its own.
	var next struct {
		User   ModelIdentifier `php:"user"`
		Locale string          `php:"locale"`
		Queueable
	}
	if err := Unmarshal([]byte(job.Chained[0]), &next); err != nil {
		t.Fatal(err)
	}
	if next.User.ID != int64(7) || next.Locale != "de" || *next.Queue != "mail" {
		t.Errorf("chained = %+v", next)
	}
}

func TestUnmarshalErrorsNamePathAndOffset(t *testing.T) {
	data := readFixture(t, "laravel_job.ser")
	var wrong struct {
		Podcast struct {
			ID string `php:"id"`
		} `php:"podcast"`
	}
	err := Unmarshal(data, &wrong)
	var te *UnmarshalTypeError
	if !errors.As(err, &te) {
		t.Fatalf("err = %v", err)
	}
	wantOff := strings.Index(string(data), `i:42;`)
	if te.Path != `App\Jobs\ProcessPodcast.podcast.id` || te.Offset != wantOff || te.PHP != "int" || te.Type.Kind() != reflect.String {
		t.Errorf("error = %+v", te)
	}
	if want := `phpser: cannot unmarshal PHP int into Go string at App\Jobs\ProcessPodcast.podcast.id (offset ` + itoa(wantOff) + `)`; err.Error() != want {
		t.Errorf("Error() = %q\nwant %q", err, want)
	}

	var list struct {
		Options struct {
			Formats []int `php:"formats"`
		} `php:"options"`
	}
	err = Unmarshal(data, &list)
	if !errors.As(err, &te) || te.Path != `App\Jobs\ProcessPodcast.options.formats[0]` {
		t.Errorf("list error = %v", err)
	}

	var small struct {
		Score int8 `php:"timeout"`
		Big   uint `php:"tries"`
	}
	if err := UnmarshalString(`O:1:"X":1:{s:7:"timeout";i:300;}`, &small); err == nil || !strings.Contains(err.Error(), "300 overflows it") {
		t.Errorf("overflow: %v", err)
	}
	if err := UnmarshalString(`O:1:"X":1:{s:5:"tries";i:-1;}`, &small); err == nil {
		t.Error("negative into uint accepted")
	}
	if err := Unmarshal(data, wrong); err == nil {
		t.Error("non-pointer target accepted")
	}
	// Syntax errors come back as they are.
	var se *SyntaxError
	if err := Unmarshal(data[:100], &list); !errors.As(err, &se) {
		t.Errorf("truncated: %v", err)
	}
}

// UnmarshalString is Unmarshal for test input written as a string.
func UnmarshalString(s string, v any) error { return Unmarshal([]byte(s), v) }

type inherited struct {
	ParentSecret string         `php:"secret,private=Fx\\ParentWithPrivate"`
	Shared       string         `php:"shared,protected"`
	Secret       string         `php:"secret,private"`
	Rest         map[string]any `php:",rest"`
}

func (inherited) PHPClass() string { return `Fx\ChildOfPrivate` }

func TestUnmarshalVisibilityAndRest(t *testing.T) {
	var v inherited
	if err := Unmarshal(readFixture(t, "object_inherited_private.ser"), &v); err != nil {
		t.Fatal(err)
	}
	want := inherited{ParentSecret: "parent-secret", Shared: "shared", Secret: "child-secret", Rest: map[string]any{"own": int64(1)}}
	if !reflect.DeepEqual(v, want) {
		t.Errorf("got %+v", v)
	}
	// A rest field of []Entry keeps what no field took, raw and in order.
	var raw struct {
		Pub  string  `php:"pub"`
		Rest []Entry `php:",rest"`
	}
	if err := Unmarshal(readFixture(t, "object_visibility.ser"), &raw); err != nil {
		t.Fatal(err)
	}
	if raw.Pub != "pub-v" || len(raw.Rest) != 2 || raw.Rest[0].Key.Str() != "\x00*\x00prot" || raw.Rest[1].Value.Str() != "priv-v" {
		t.Errorf("raw rest = %+v", raw)
	}
	// Untagged exported fields match by name, exactly or ignoring case.
	var plain struct{ Pub, PROT, Priv string }
	if err := Unmarshal(readFixture(t, "object_visibility.ser"), &plain); err != nil {
		t.Fatal(err)
	}
	if plain.Pub != "pub-v" || plain.PROT != "prot-v" || plain.Priv != "priv-v" {
		t.Errorf("untagged = %+v", plain)
	}
}

func TestUnmarshalAny(t *testing.T) {
	var got []any
	if err := Unmarshal([]byte(`a:9:{i:0;N;i:1;b:1;i:2;i:-5;i:3;d:2.5;i:4;s:1:"x";i:5;a:2:{i:0;i:1;i:1;i:2;}i:6;a:2:{i:1;s:1:"a";s:1:"k";s:1:"b";}i:7;E:7:"A\B:Cse";i:8;C:1:"C":2:{xy}}`), &got); err != nil {
		t.Fatal(err)
	}
	want := []any{nil, true, int64(-5), 2.5, "x", []any{int64(1), int64(2)}, map[string]any{"1": "a", "k": "b"},
		EnumCase{Class: `A\B`, Case: "Cse"}, Custom{Class: "C", Data: "xy"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
	var obj any
	if err := Unmarshal(readFixture(t, "object_visibility.ser"), &obj); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(obj, Object{Class: `Fx\Vis`, Props: map[string]any{"pub": "pub-v", "prot": "prot-v", "priv": "priv-v"}}) {
		t.Errorf("object = %#v", obj)
	}
	// Sparse arrays are not lists; Map keeps PHP's order and key types.
	var sparse any
	var ordered Map
	data := readFixture(t, "array_sparse.ser")
	if err := Unmarshal(data, &sparse); err != nil {
		t.Fatal(err)
	}
	if err := Unmarshal(data, &ordered); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sparse, map[string]any{"0": "a", "2": "c", "1": "b"}) {
		t.Errorf("sparse = %#v", sparse)
	}
	if !reflect.DeepEqual(ordered, Map{{IntKey(0), "a"}, {IntKey(2), "c"}, {IntKey(1), "b"}}) {
		t.Errorf("ordered = %#v", ordered)
	}
	if x, ok := ordered.Get("2"); !ok || x != "c" {
		t.Errorf("Map.Get = %v %v", x, ok)
	}
}

type status string

func (status) PHPClass() string { return `Fx\Status` }

type suit string

func (suit) PHPClass() string { return `Fx\Suit` }

func TestUnmarshalEnums(t *testing.T) {
	var s struct {
		Status status `php:"status"`
	}
	if err := Unmarshal(readFixture(t, "enum_backed.ser"), &s); err != nil || s.Status != "Active" {
		t.Fatalf("%q %v", s.Status, err)
	}
	var plain map[string]string
	if err := Unmarshal(readFixture(t, "enum_backed.ser"), &plain); err != nil || plain["status"] != "Active" {
		t.Fatalf("%v %v", plain, err)
	}
	var wrong struct {
		Status suit `php:"status"`
	}
	err := Unmarshal(readFixture(t, "enum_backed.ser"), &wrong)
	if err == nil || !strings.Contains(err.Error(), `want a case of Fx\Suit`) {
		t.Fatalf("enum of another class: %v", err)
	}
}

type node struct {
	Name     string  `php:"name"`
	Children []node  `php:"children"`
	Parent   *node   `php:"parent"`
	Self     *Value  `php:"self"`
	Extra    []Entry `php:",rest"`
}

func TestUnmarshalReferences(t *testing.T) {
	var n node
	if err := Unmarshal(readFixture(t, "ref_cycle.ser"), &n); err != nil {
		t.Fatal(err)
	}
	if n.Name != "self" || n.Parent != nil {
		t.Errorf("a reference back to the object being mapped must stay zero: %+v", n)
	}
	var shared map[string]struct {
		Pub string `php:"pub"`
	}
	if err := Unmarshal(readFixture(t, "ref_r_object.ser"), &shared); err != nil {
		t.Fatal(err)
	}
	if shared["first"].Pub != "same" || shared["second"].Pub != "same" {
		t.Errorf("r: not followed: %+v", shared)
	}
	var refs map[string]string
	if err := Unmarshal(readFixture(t, "ref_R_value.ser"), &refs); err != nil || refs["b"] != "shared" {
		t.Errorf("R: not followed: %v %v", refs, err)
	}
	// Nested references that double at every level: PHP shares them, a copying
	// mapper would need 2^40 steps. The expansion budget stops it.
	s := `s:1:"x";`
	var b strings.Builder
	depth := 40
	b.WriteString(strings.Repeat(`a:2:{i:0;`, depth))
	b.WriteString(s)
	for i := depth; i >= 1; i-- {
		// value numbers: level k's array is k, the innermost string is depth+1.
		b.WriteString(`i:1;R:` + itoa(i+1) + `;}`)
	}
	bomb := b.String()
	v, err := DecodeString(bomb)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := v.Decode(&x); err == nil || !strings.Contains(err.Error(), "references expand to more than") {
		t.Fatalf("bomb: %v", err)
	}
	if _, err := MarshalReadable(v); err == nil || !strings.Contains(err.Error(), "references expand to more than") {
		t.Fatalf("bomb readable: %v", err)
	}
}

type selfDecoding struct{ got string }

func (s *selfDecoding) UnmarshalPHP(v *Value) error {
	if v.Kind() != KindObject {
		return errors.New("want an object")
	}
	s.got = v.Class()
	return nil
}

func TestUnmarshalHooksAndSpecialTypes(t *testing.T) {
	var s struct {
		V   selfDecoding `php:"v"`
		Raw *Value       `php:"list"`
	}
	if err := Unmarshal(readFixture(t, "object_in_array.ser"), &s); err != nil {
		t.Fatal(err)
	}
	if s.V.got != `Fx\Vis` || s.Raw.Kind() != KindArray || s.Raw.Len() != 2 {
		t.Errorf("got %+v", s)
	}
	var bad struct {
		V selfDecoding `php:"list"`
	}
	err := Unmarshal(readFixture(t, "object_in_array.ser"), &bad)
	if err == nil || !strings.Contains(err.Error(), "at list") || !strings.Contains(err.Error(), "want an object") {
		t.Errorf("hook error = %v", err)
	}
	var raw []byte
	if err := Unmarshal([]byte("s:3:\"\x00\xff\x01\";"), &raw); err != nil || string(raw) != "\x00\xff\x01" {
		t.Errorf("bytes = %q %v", raw, err)
	}
	var f struct {
		A float64 `php:"0"`
		B int     `php:"1"`
		C string  `php:"2"`
	}
	if err := Unmarshal([]byte(`a:3:{i:0;i:3;i:1;d:4;i:2;N;}`), &f); err != nil || f.A != 3 || f.B != 4 || f.C != "" {
		t.Errorf("numbers = %+v %v", f, err)
	}
	var arr [2]int
	if err := Unmarshal([]byte(`a:3:{i:0;i:1;i:1;i:2;i:2;i:3;}`), &arr); err == nil {
		t.Error("3 elements into [2]int accepted")
	}
	var ints map[int]string
	if err := Unmarshal([]byte(`a:2:{i:5;s:1:"a";s:2:"-3";s:1:"b";}`), &ints); err != nil || ints[5] != "a" || ints[-3] != "b" {
		t.Errorf("int keys = %v %v", ints, err)
	}
	if err := Unmarshal([]byte(`a:1:{s:3:"007";s:1:"a";}`), &ints); err == nil {
		t.Error(`"007" is not an int key in PHP`)
	}
	var fl struct {
		N int `php:"n"`
	}
	if err := Unmarshal([]byte(`a:1:{s:1:"n";d:1.5;}`), &fl); err == nil {
		t.Error("1.5 into int accepted")
	}
	if err := Unmarshal([]byte(`a:1:{s:1:"n";d:`+"1.0E+300"+`;}`), &fl); err == nil {
		t.Error("1e300 into int accepted")
	}
	var inf float64
	if err := Unmarshal([]byte(`d:-INF;`), &inf); err != nil || !math.IsInf(inf, -1) {
		t.Errorf("-INF = %v %v", inf, err)
	}
}

type embeddedBase struct {
	Secret string `php:"secret,private"`
	Shared string `php:"shared,protected"`
}

func (embeddedBase) PHPClass() string { return `Fx\ParentWithPrivate` }

type embeddingChild struct {
	*embeddedBase
	Secret string `php:"secret,private"`
	Own    int    `php:"own"`
}

func (embeddingChild) PHPClass() string { return `Fx\ChildOfPrivate` }

func TestUnmarshalEmbeddedParentClass(t *testing.T) {
	// An embedded struct with its own PHPClass declares the private properties of the
	// PHP parent class, as with PHP inheritance.
	data := readFixture(t, "object_inherited_private.ser")
	var c embeddingChild
	err := Unmarshal(data, &c)
	// The embedded pointer's type is unexported, so it cannot be allocated.
	if err == nil {
		t.Fatalf("expected an error for the unexported embedded pointer, got %+v", c)
	}
	c.embeddedBase = &embeddedBase{}
	if err := Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if c.embeddedBase.Secret != "parent-secret" || c.Secret != "child-secret" || c.Shared != "shared" || c.Own != 1 {
		t.Errorf("got %+v %+v", c, *c.embeddedBase)
	}
	out, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := Decode(out)
	if p, _ := v.Lookup(StrKey("\x00Fx\\ParentWithPrivate\x00secret")); p == nil || p.Str() != "parent-secret" {
		t.Errorf("parent private not mangled with the parent class: %q", out)
	}
	if p, _ := v.Lookup(StrKey("\x00Fx\\ChildOfPrivate\x00secret")); p == nil || p.Str() != "child-secret" {
		t.Errorf("child private: %q", out)
	}
}

func TestTimeOf(t *testing.T) {
	var ts []time.Time
	in := `a:5:{` +
		`i:0;O:25:"Illuminate\Support\Carbon":3:{s:4:"date";s:26:"2024-03-05 06:07:08.123456";s:13:"timezone_type";i:3;s:8:"timezone";s:13:"Europe/Berlin";}` +
		`i:1;O:8:"DateTime":3:{s:4:"date";s:26:"2024-01-15 12:00:00.500000";s:13:"timezone_type";i:1;s:8:"timezone";s:6:"-05:30";}` +
		`i:2;O:8:"DateTime":3:{s:4:"date";s:26:"2024-07-15 12:00:00.000000";s:13:"timezone_type";i:2;s:8:"timezone";s:4:"CEST";}` +
		`i:3;O:17:"DateTimeImmutable":3:{s:4:"date";s:27:"-0001-11-30 00:00:00.000000";s:13:"timezone_type";i:3;s:8:"timezone";s:3:"UTC";}` +
		`i:4;N;}`
	if err := Unmarshal([]byte(in), &ts); err != nil {
		t.Fatal(err)
	}
	want := []time.Time{
		time.Date(2024, 3, 5, 5, 7, 8, 123456000, time.UTC),
		time.Date(2024, 1, 15, 17, 30, 0, 500000000, time.UTC),
		time.Date(2024, 7, 15, 10, 0, 0, 0, time.UTC),
		time.Date(-1, 11, 30, 0, 0, 0, 0, time.UTC),
		{},
	}
	for i := range want {
		if !ts[i].Equal(want[i]) {
			t.Errorf("%d: %v, want %v", i, ts[i], want[i])
		}
	}
	if ts[0].Location().String() != "Europe/Berlin" {
		t.Errorf("zone = %v", ts[0].Location())
	}
	for _, bad := range []string{
		`O:8:"DateTime":1:{s:4:"date";s:10:"2024-01-01";}`,
		`O:8:"DateTime":3:{s:4:"date";s:10:"2024-01-01";s:13:"timezone_type";i:3;s:8:"timezone";s:3:"UTC";}`,
		`O:8:"DateTime":3:{s:4:"date";s:26:"2024-13-01 00:00:00.000000";s:13:"timezone_type";i:3;s:8:"timezone";s:3:"UTC";}`,
		`O:8:"DateTime":3:{s:4:"date";s:26:"2024-01-01 00:00:00.000000";s:13:"timezone_type";i:3;s:8:"timezone";s:9:"Mars/Base";}`,
		`O:8:"DateTime":3:{s:4:"date";s:26:"2024-01-01 00:00:00.000000";s:13:"timezone_type";i:2;s:8:"timezone";s:3:"XYZ";}`,
		`O:8:"DateTime":3:{s:4:"date";s:26:"2024-01-01 00:00:00.000000";s:13:"timezone_type";i:1;s:8:"timezone";s:5:"+0200";}`,
		`O:8:"DateTime":3:{s:4:"date";s:26:"2024-01-01 00:00:00.000000";s:13:"timezone_type";i:4;s:8:"timezone";s:3:"UTC";}`,
		`s:10:"2024-01-01";`,
	} {
		var tm time.Time
		if err := Unmarshal([]byte(bad), &tm); err == nil {
			t.Errorf("%s accepted as %v", bad, tm)
		}
	}
}
