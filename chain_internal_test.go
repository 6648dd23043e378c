package laraq

import (
	"strconv"
	"strings"
	"testing"

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
		if got := mayHaveChain(cmd); got != want {
			t.Errorf("mayHaveChain(%s) = %v", cmd, got)
		}
	}
}

func TestNextInChain(t *testing.T) {
	step := func(n int64, props ...phpser.Entry) string {
		return ser(t, phpser.NewObject(`App\Jobs\S`, append([]phpser.Entry{phpser.PublicProp("step", phpser.Int(n))}, props...)...))
	}
	queueable := func(conn, queue *phpser.Value, chained ...string) []phpser.Entry {
		items := make([]*phpser.Value, len(chained))
		for i, c := range chained {
			items[i] = phpser.String(c)
		}
		return []phpser.Entry{
			phpser.PublicProp("connection", conn), phpser.PublicProp("queue", queue),
			phpser.PublicProp("chainConnection", phpser.Null()), phpser.PublicProp("chainQueue", phpser.Null()),
			phpser.PublicProp("chainCatchCallbacks", phpser.Null()), phpser.PublicProp("chained", phpser.List(items...)),
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
	next, err := nextInChain(cmd)
	if err != nil {
		t.Fatal(err)
	}
	got := ser(t, next)
	want := `O:10:"App\Jobs\S":7:{s:4:"step";i:2;s:10:"connection";s:5:"redis";s:5:"queue";s:3:"own";` +
		`s:15:"chainConnection";s:5:"redis";s:10:"chainQueue";s:6:"chainq";s:19:"chainCatchCallbacks";N;` +
		`s:7:"chained";a:1:{i:0;s:` + itoa(len(third)) + `:"` + third + `";}}`
	if got != want {
		t.Errorf("next\n got %s\nwant %s", got, want)
	}
	last, err := nextInChain(next)
	if err != nil {
		t.Fatal(err)
	}
	if s := ser(t, last); !strings.Contains(s, `s:10:"connection";s:5:"redis";s:5:"queue";s:6:"chainq";`) || !strings.HasSuffix(s, `s:7:"chained";a:0:{}}`) {
		t.Errorf("last %s", s)
	}
	if none, err := nextInChain(last); none != nil || err != nil {
		t.Errorf("empty chain gave %v, %v", none, err)
	}

	// A follower serialized without its default-valued properties (SerializesModels on
	// 9.4+) gets only the non-default ones, at the end.
	bare := ser(t, phpser.NewObject(`App\Jobs\S`, phpser.PublicProp("step", phpser.Int(2))))
	cmd = withChainDefaults(phpser.NewObject(`App\Jobs\S`, queueable(phpser.Null(), phpser.Null(), bare)...), "", "q")
	next, err = nextInChain(cmd)
	if err != nil {
		t.Fatal(err)
	}
	// connection becomes "" (own null ?: chain's ""), which is not the default null.
	if s := ser(t, next); s != `O:10:"App\Jobs\S":5:{s:4:"step";i:2;s:10:"connection";s:0:"";s:5:"queue";s:1:"q";s:15:"chainConnection";s:0:"";s:10:"chainQueue";s:1:"q";}` {
		t.Errorf("bare follower: %s", s)
	}

	for name, chained := range map[string]*phpser.Value{
		"not an array":      phpser.String("x"),
		"not a string":      phpser.List(phpser.Int(5)),
		"not serialized":    phpser.List(phpser.String("garbage")),
		"not an object":     phpser.List(phpser.String("b:1;")),
		"refs after change": phpser.List(phpser.String(`O:1:"S":3:{s:1:"a";O:1:"X":0:{}s:7:"chained";a:0:{}s:1:"b";r:2;}`), phpser.String("N;")),
	} {
		_, err := nextInChain(phpser.NewObject("S", phpser.PublicProp("chained", chained)))
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// A reference before every changed property is left as it is.
	ok := `O:1:"S":3:{s:1:"a";O:1:"X":0:{}s:1:"b";r:2;s:7:"chained";a:0:{}}`
	next, err = nextInChain(phpser.NewObject("S", phpser.PublicProp("chained", phpser.List(phpser.String(ok), phpser.String("N;")))))
	if err != nil {
		t.Fatalf("ref before the chain properties: %v", err)
	}
	if s := ser(t, next); s != `O:1:"S":3:{s:1:"a";O:1:"X":0:{}s:1:"b";r:2;s:7:"chained";a:1:{i:0;s:2:"N;";}}` {
		t.Errorf("ref before the chain properties: %s", s)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// FuzzNextInChain feeds arbitrary chain elements to nextInChain: it must never panic, and
// whatever it accepts must serialize and decode back to an object.
func FuzzNextInChain(f *testing.F) {
	for _, s := range []string{
		`O:10:"App\Jobs\S":2:{s:4:"step";i:2;s:7:"chained";a:0:{}}`,
		`O:1:"S":3:{s:1:"a";O:1:"X":0:{}s:1:"b";r:2;s:7:"chained";a:0:{}}`,
		`O:1:"S":3:{s:1:"a";O:1:"X":0:{}s:7:"chained";a:0:{}s:1:"b";r:2;}`,
		`O:1:"S":2:{s:5:"queue";s:1:"0";s:10:"connection";R:2;}`,
		`b:1;`, `garbage`, ``,
	} {
		f.Add(s, "chainq")
	}
	f.Fuzz(func(t *testing.T, first, chainQueue string) {
		cmd := phpser.NewObject(`App\Jobs\S`,
			phpser.PublicProp("chainQueue", phpser.String(chainQueue)),
			phpser.PublicProp("chained", phpser.List(phpser.String(first), phpser.String("N;"))))
		next, err := nextInChain(cmd)
		if err != nil {
			return
		}
		b, err := phpser.Encode(next)
		if err != nil {
			t.Fatalf("accepted %q but cannot serialize the next job: %v", first, err)
		}
		back, err := phpser.Decode(b)
		if err != nil || back.Kind() != phpser.KindObject {
			t.Fatalf("accepted %q, wrote %q which does not decode to an object: %v", first, b, err)
		}
	})
}
