package dispatch

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/phpser"
)

func ser(t *testing.T, v *phpser.Value) string {
	t.Helper()
	b, err := phpser.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestMayHaveChain(t *testing.T) {
	for cmd, want := range map[string]bool{
		`O:1:"A":1:{s:7:"chained";a:0:{}}`: false,
		`O:1:"A":1:{s:7:"chained";N;}`:     false,
		`O:1:"A":0:{}`:                     false,
		`O:1:"A":2:{s:1:"x";s:20:"s:7:"chained";a:0:{}";s:7:"chained";a:1:{}`: true,
		`O:1:"A":1:{s:7:"chained";a:1:{i:0;s:6:"O:1:"B"";}}`:                  true,
	} {
		if got := MayHaveChain(cmd); got != want {
			t.Errorf("MayHaveChain(%s) = %v", cmd, got)
		}
	}
}

// l8 is the release of the 8.x trait order, where nothing is left out.
var l8 = job.Release{Major: 8, Minor: 83}

func nextOf(t *testing.T, cmd *phpser.Value, rel job.Release, typeOf func(string) reflect.Type) *phpser.Value {
	t.Helper()
	n, err := NextInChain(cmd, rel, typeOf)
	if err != nil {
		t.Fatal(err)
	}
	if n == nil {
		return nil
	}
	return n.cmd.out
}

func TestNextInChain(t *testing.T) {
	step := func(n int64, props ...phpser.Entry) string {
		return ser(t, phpser.NewObject(`App\Jobs\S`, append([]phpser.Entry{phpser.PublicProp("step", phpser.Int(n))}, props...)...))
	}
	// The 8.x trait properties, with the given connection, queue and chain.
	queueable := func(conn, queue *phpser.Value, chained ...string) []phpser.Entry {
		items := make([]*phpser.Value, len(chained))
		for i, c := range chained {
			items[i] = phpser.String(c)
		}
		return []phpser.Entry{
			phpser.PublicProp("connection", conn), phpser.PublicProp("queue", queue),
			phpser.PublicProp("chainConnection", phpser.Null()), phpser.PublicProp("chainQueue", phpser.Null()),
			phpser.PublicProp("chainCatchCallbacks", phpser.Null()), phpser.PublicProp("delay", phpser.Null()),
			phpser.PublicProp("afterCommit", phpser.Null()), phpser.PublicProp("middleware", phpser.NewArray()),
			phpser.PublicProp("chained", phpser.List(items...)),
		}
	}
	withChainDefaults := func(cmd *phpser.Value, conn, queue string) *phpser.Value {
		ents := append([]phpser.Entry(nil), cmd.Entries()...)
		for i := range ents {
			switch n, _, _ := ents[i].Key.Name(); n {
			case "chainConnection":
				ents[i].Value = *phpser.String(conn)
			case "chainQueue":
				ents[i].Value = *phpser.String(queue)
			}
		}
		return phpser.NewObject(cmd.Class(), ents...)
	}

	// The follower's own queue wins; "0" is falsy for ?: and gives way to the chain's.
	second := step(2, queueable(phpser.Null(), phpser.String("own"))...)
	third := step(3, queueable(phpser.String("0"), phpser.String("0"))...)
	cmd := withChainDefaults(phpser.NewObject(`App\Jobs\S`, append([]phpser.Entry{phpser.PublicProp("step", phpser.Int(1))},
		queueable(phpser.Null(), phpser.Null(), second, third)...)...), "redis", "chainq")
	next := nextOf(t, cmd, l8, nil)
	got := ser(t, next)
	want := `O:10:"App\Jobs\S":10:{s:4:"step";i:2;s:10:"connection";s:5:"redis";s:5:"queue";s:3:"own";` +
		`s:15:"chainConnection";s:5:"redis";s:10:"chainQueue";s:6:"chainq";s:19:"chainCatchCallbacks";N;` +
		`s:5:"delay";N;s:11:"afterCommit";N;s:10:"middleware";a:0:{}` +
		`s:7:"chained";a:1:{i:0;s:` + itoa(len(third)) + `:"` + third + `";}}`
	if got != want {
		t.Errorf("next\n got %s\nwant %s", got, want)
	}
	last := nextOf(t, next, l8, nil)
	if s := ser(t, last); !strings.Contains(s, `s:10:"connection";s:5:"redis";s:5:"queue";s:6:"chainq";`) || !strings.HasSuffix(s, `s:7:"chained";a:0:{}}`) {
		t.Errorf("last %s", s)
	}
	if none := nextOf(t, last, l8, nil); none != nil {
		t.Errorf("empty chain gave %v", none)
	}

	for name, chained := range map[string]*phpser.Value{
		"not an array":      phpser.String("x"),
		"not a string":      phpser.List(phpser.Int(5)),
		"not serialized":    phpser.List(phpser.String("garbage")),
		"not an object":     phpser.List(phpser.String("b:1;")),
		"refs after change": phpser.List(phpser.String(`O:1:"S":3:{s:1:"a";O:1:"X":0:{}s:7:"chained";a:0:{}s:1:"b";r:2;}`), phpser.String("N;")),
	} {
		_, err := NextInChain(phpser.NewObject("S", phpser.PublicProp("chained", chained)), l8, nil)
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A reference before every changed property is left as it is.
	ok := `O:1:"S":3:{s:1:"a";O:1:"X":0:{}s:1:"b";r:2;s:7:"chained";a:0:{}}`
	n, err := NextInChain(phpser.NewObject("S", phpser.PublicProp("chained", phpser.List(phpser.String(ok), phpser.String("N;")))), mustParse(t, "11.1"), nil)
	if err != nil {
		t.Fatalf("ref before the chain properties: %v", err)
	}
	if s := ser(t, n.cmd.out); s != `O:1:"S":3:{s:1:"a";O:1:"X":0:{}s:1:"b";r:2;s:7:"chained";a:1:{i:0;s:2:"N;";}}` {
		t.Errorf("ref before the chain properties: %s", s)
	}
}

type chainedJob struct {
	Step  int `php:"step"`
	Tries int `php:"tries,default=3"`
	job.Queueable
}

func (chainedJob) PHPClass() string { return `App\Jobs\S` }
func (chainedJob) Backoff() []int   { return []int{2, 4} }

type badDefaultJob struct {
	Step int `php:"step,default=\"x\""`
	job.Queueable
}

func (badDefaultJob) PHPClass() string { return `App\Jobs\S` }

// A Go type whose tags are wrong does not stop the chain: it goes on as for a class
// without a type, and says why.
func TestNextInChainWithABadGoType(t *testing.T) {
	cmd := phpser.NewObject(`App\Jobs\S`, phpser.PublicProp("chained", phpser.List(phpser.String(`O:10:"App\Jobs\S":1:{s:4:"step";i:2;}`))))
	n, err := NextInChain(cmd, mustParse(t, "13.26.1"), func(string) reflect.Type { return reflect.TypeFor[badDefaultJob]() })
	if err != nil || n == nil {
		t.Fatalf("%v, %v", n, err)
	}
	if n.DecodeErr == nil || !strings.Contains(n.DecodeErr.Error(), "default") || len(n.MayLack) == 0 {
		t.Errorf("decodeErr %v, mayLack %v", n.DecodeErr, n.MayLack)
	}
}

type nativeJob struct {
	Step int `php:"step"`
	job.Queueable
}

func (nativeJob) PHPClass() string          { return `App\Jobs\N` }
func (nativeJob) PHPSerializesModels() bool { return false }

func mustParse(t *testing.T, s string) job.Release {
	t.Helper()
	r, err := job.ParseRelease(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestNextInChainLeavesDefaultsOut: on 9.4+, a follower whose class uses
// SerializesModels is serialized without its default-valued properties, the chain
// properties written where the release declares them; its metadata comes from the
// defaults and methods of its Go type, when one is known.
func TestNextInChainLeavesDefaultsOut(t *testing.T) {
	rel := mustParse(t, "13.26.1")
	bare := `O:10:"App\Jobs\S":1:{s:4:"step";i:2;}`
	third := `O:10:"App\Jobs\S":1:{s:4:"step";i:3;}`
	cmd := phpser.NewObject(`App\Jobs\S`,
		phpser.PublicProp("step", phpser.Int(1)), phpser.PublicProp("queue", phpser.String("q")),
		phpser.PublicProp("chained", phpser.List(phpser.String(bare), phpser.String(third))),
		phpser.PublicProp("chainQueue", phpser.String("q")))

	// Without a Go type: the class's own defaults are unknown, the trait's are not.
	n, err := NextInChain(cmd, rel, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `O:10:"App\Jobs\S":4:{s:4:"step";i:2;s:5:"queue";s:1:"q";` +
		`s:7:"chained";a:1:{i:0;s:` + itoa(len(third)) + `:"` + third + `";}s:10:"chainQueue";s:1:"q";}`
	if s := ser(t, n.cmd.out); s != want {
		t.Errorf("untyped follower\n got %s\nwant %s", s, want)
	}
	if strings.Join(n.MayLack, ",") != strings.Join(metaProps, ",") {
		t.Errorf("mayLack %v", n.MayLack)
	}
	if _, ok := n.cmd.live.Prop("middleware"); !ok {
		t.Error("the object PHP holds has middleware = [] even though the payload leaves it out")
	}

	// With one: the same bytes (tries = 3 is a default, left out), and tries 3 and
	// backoff() in the metadata.
	typeOf := func(class string) reflect.Type {
		if class == `App\Jobs\S` {
			return reflect.TypeFor[chainedJob]()
		}
		return nil
	}
	n, err = NextInChain(cmd, rel, typeOf)
	if err != nil {
		t.Fatal(err)
	}
	if s := ser(t, n.cmd.out); s != want || n.MayLack != nil {
		t.Errorf("typed follower\n got %s\nwant %s (mayLack %v)", s, want, n.MayLack)
	}
	md, err := deriveMeta(n.cmd.live, n.cmd.methods, rel, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if md.maxTries == nil || md.maxTries.Int != 3 || md.backoff == nil || md.backoff.Str != "2,4" {
		t.Errorf("typed follower's metadata: tries %v, backoff %v", md.maxTries, md.backoff)
	}

	// A class without SerializesModels writes every property, the trait's in the
	// release's order.
	native := `O:10:"App\Jobs\N":1:{s:4:"step";i:2;}`
	cmd = phpser.NewObject(`App\Jobs\N`, phpser.PublicProp("chained", phpser.List(phpser.String(native))))
	n, err = NextInChain(cmd, rel, func(string) reflect.Type { return reflect.TypeFor[nativeJob]() })
	if err != nil {
		t.Fatal(err)
	}
	if s := ser(t, n.cmd.out); !strings.HasPrefix(s, `O:10:"App\Jobs\N":15:{s:4:"step";i:2;s:3:"job";N;s:10:"connection";N;s:5:"queue";N;s:12:"messageGroup";N;`) ||
		!strings.HasSuffix(s, `s:7:"chained";a:0:{}s:15:"chainConnection";N;s:10:"chainQueue";N;s:19:"chainCatchCallbacks";N;}`) {
		t.Errorf("native follower: %s", s)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// FuzzNextInChain feeds arbitrary chain elements to nextInChain on an 8.x and a 13.x
// release, with and without a Go type for the class: it must never panic, and whatever it
// accepts must serialize and decode back to an object, as must the object PHP would hold.
func FuzzNextInChain(f *testing.F) {
	for _, s := range []string{
		`O:10:"App\Jobs\S":2:{s:4:"step";i:2;s:7:"chained";a:0:{}}`,
		`O:10:"App\Jobs\S":1:{s:4:"step";i:2;}`,
		`O:10:"App\Jobs\S":2:{s:5:"tries";s:1:"x";s:12:"debounceOwner";s:1:"o";}`,
		`O:1:"S":3:{s:1:"a";O:1:"X":0:{}s:1:"b";r:2;s:7:"chained";a:0:{}}`,
		`O:1:"S":3:{s:1:"a";O:1:"X":0:{}s:7:"chained";a:0:{}s:1:"b";r:2;}`,
		`O:1:"S":2:{s:5:"queue";s:1:"0";s:10:"connection";R:2;}`,
		`b:1;`, `garbage`, ``,
	} {
		f.Add(s, "chainq", uint8(0))
		f.Add(s, "", uint8(3))
	}
	f.Fuzz(func(t *testing.T, first, chainQueue string, mode uint8) {
		rel := l8
		if mode&1 != 0 {
			rel = job.Release{Major: 13, Minor: 26, Patch: 1}
		}
		var typeOf func(string) reflect.Type
		if mode&2 != 0 {
			typeOf = func(string) reflect.Type { return reflect.TypeFor[chainedJob]() }
		}
		cmd := phpser.NewObject(`App\Jobs\S`,
			phpser.PublicProp("chainQueue", phpser.String(chainQueue)),
			phpser.PublicProp("chained", phpser.List(phpser.String(first), phpser.String("N;"))))
		next, err := NextInChain(cmd, rel, typeOf)
		if err != nil {
			return
		}
		for _, v := range []*phpser.Value{next.cmd.out, next.cmd.live} {
			b, err := phpser.Encode(v)
			if err != nil {
				t.Fatalf("accepted %q but cannot serialize the next job: %v", first, err)
			}
			back, err := phpser.Decode(b)
			if err != nil || back.Kind() != phpser.KindObject {
				t.Fatalf("accepted %q, wrote %q which does not decode to an object: %v", first, b, err)
			}
		}
		if _, err := deriveMeta(next.cmd.live, next.cmd.methods, rel, time.Unix(0, 0)); err != nil {
			return // metadata PHP could not write either (an array $tries, ...): an error, not a panic
		}
	})
}
