package dispatch

import (
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpclass"
	"github.com/laraq/laraq/phpser"
)

// factsDispatcher is a Dispatcher with the golden manifest of a major's test classes
// (testdata/phpclass/manifest-L<major>.json) on release rel; it never touches Redis.
func factsDispatcher(t *testing.T, major int, rel string) *Dispatcher {
	t.Helper()
	m, err := phpclass.Load(testenv.Testdata("phpclass", "manifest-"+testenv.MajorName(major)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := job.ParseRelease(rel)
	if err != nil {
		t.Fatal(err)
	}
	return New(Config{Connection: "redis", Queue: "default", Release: r, Classes: m})
}

func object(class string, props ...phpser.Entry) *phpser.Value {
	return phpser.NewObject(`App\Jobs\Classes\`+class, props...)
}

// TestClassUnique: the lock a value of a ShouldBeUnique class takes is read from the
// class's facts as UniqueLock reads the object PHP holds, and what PHP code would
// compute (uniqueId(), uniqueFor()) must be given, only where PHP calls it.
func TestClassUnique(t *testing.T) {
	l13, l8 := factsDispatcher(t, 13, "13.26"), factsDispatcher(t, 8, "8.83")
	id := func(s string) Option { return func(o *Options) error { o.UniqueID = &s; return nil } }
	for_ := func(d time.Duration) Option { return func(o *Options) error { o.UniqueFor = &d; return nil } }
	for _, c := range []struct {
		name string
		p    *Dispatcher
		v    *phpser.Value
		opts []Option
		want string // "class id uniqueFor", or the error's words
	}{
		{"property id, default uniqueFor", l13, object("UniquePropJob", phpser.PublicProp("uniqueId", phpser.String("u-7"))), nil, `UniquePropJob u-7 30s`},
		{"int id, uniqueFor set", l13, object("UniquePropJob", phpser.PublicProp("uniqueId", phpser.Int(5)), phpser.PublicProp("uniqueFor", phpser.Int(60))), nil, `UniquePropJob 5 1m0s`},
		{"no id: ''", l13, object("UniquePropJob"), nil, `UniquePropJob  30s`},
		{"uniqueId() untold", l13, object("UniqueMethodJob"), nil, `uniqueId() method, PHP code laraq cannot run: give the id it returns`},
		{"uniqueFor() untold", l13, object("UniqueMethodJob"), []Option{id("order-9")}, `lasts what its uniqueFor() method returns, PHP code laraq cannot run: give it`},
		{"both told", l13, object("UniqueMethodJob"), []Option{id("order-9"), for_(45 * time.Second)}, `UniqueMethodJob order-9 45s`},
		{"8.x never calls uniqueFor()", l8, object("UniqueMethodJob"), []Option{id("order-9")}, `UniqueMethodJob order-9 0s`},
		{"8.x: uniqueFor() told", l8, object("UniqueMethodJob"), []Option{id("order-9"), for_(time.Second)}, `8.x reads the uniqueFor property`},
		{"id told for a property", l13, object("UniquePropJob"), []Option{id("x")}, `has no uniqueId() method: its lock is named by its uniqueId property`},
		{"id told, not unique", l13, object("NativeJob"), []Option{id("x")}, `which does not implement ShouldBeUnique`},
		{"not unique", l13, object("NativeJob"), nil, `<nil>`},
		{"unknown class", l13, phpser.NewObject(`App\Jobs\Elsewhere`), nil, `the manifest has no class App\Jobs\Elsewhere`},
	} {
		o, err := collect(c.opts)
		if err != nil {
			t.Fatal(err)
		}
		s, err := c.p.uniqueOf(c.v, o)
		got := "<nil>"
		switch {
		case err != nil:
			got = err.Error()
		case s != nil:
			got = strings.TrimPrefix(s.class, `App\Jobs\Classes\`) + " " + s.id + " " + s.uniqueFor.String()
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// TestClassCommand: a value of a class the facts know is completed as PHP holds it: its
// 13.x queue attributes become the metadata on 13.x only, a ShouldBeEncrypted class is
// never written in the clear, and a property the class does not have is refused.
func TestClassCommand(t *testing.T) {
	meta := func(p *Dispatcher, v *phpser.Value) string {
		t.Helper()
		m, err := p.Prepare(v)
		if err != nil {
			return err.Error()
		}
		doc, err := payload.DecodeValue(m.Payload)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, k := range []string{"maxTries", "backoff", "timeout", "maxExceptions", "failOnTimeout"} {
			b, _ := doc.Get(k).AppendJSON(nil, payload.JSONUnescapedUnicode)
			parts = append(parts, k+"="+string(b))
		}
		return strings.Join(parts, " ")
	}
	attributed := object("AttributedJob", phpser.PublicProp("label", phpser.String("a")))
	if got, want := meta(factsDispatcher(t, 13, "13.26"), attributed), `maxTries=4 backoff="1,3" timeout=20 maxExceptions=2 failOnTimeout=true`; got != want {
		t.Errorf("13.26 reads the attributes: %s, want %s", got, want)
	}
	if got, want := meta(factsDispatcher(t, 13, "12.40"), attributed), `maxTries=null backoff=null timeout=null maxExceptions=null failOnTimeout=false`; got != want {
		t.Errorf("12.40 does not: %s, want %s", got, want)
	}
	enc := object("EncryptedJob", phpser.PublicProp("card", phpser.String("4111")))
	if got := meta(factsDispatcher(t, 13, "13.26"), enc); !strings.Contains(got, "should be encrypted (ShouldBeEncrypted), but the connection has no Encrypter") {
		t.Errorf("an EncryptedJob without an Encrypter: %s", got)
	}
	typo := object("UniquePropJob", phpser.PublicProp("orderID", phpser.Int(1)))
	if got := meta(factsDispatcher(t, 13, "13.26"), typo); !strings.Contains(got, `has no property $orderID (it has $orderId`) {
		t.Errorf("a property the class lacks: %s", got)
	}
}
