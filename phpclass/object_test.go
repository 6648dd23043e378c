package phpclass_test

import (
	"strings"
	"testing"

	"github.com/laraq/laraq/phpser"
)

// TestObjectAndWritten: the object PHP holds takes the given properties by plain name
// (the manifest knows their visibility), the rest at their defaults, in serialize()
// order, a typed property without default left out; 9.4+ SerializesModels then leaves
// out what still holds its default, and a native class writes everything.
func TestObjectAndWritten(t *testing.T) {
	m := fixture(t, "L13")
	c := m.Class(`App\Jobs\Classes\KitchenSinkJob`)
	obj, err := c.Object([]phpser.Entry{
		phpser.PublicProp("prot", phpser.String("given")),
		phpser.PublicProp("count", phpser.Int(3)),
		phpser.PublicProp("label", phpser.String("other")),
	})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range obj.Entries() {
		keys = append(keys, e.Key.Str())
	}
	if strings.Join(keys[:16], ",") != "untyped,untypedDefault,count,ratio,label,flag,maybe,nick,list,map,mixed,status,suit,either,\x00*\x00prot,\x00*\x00protTyped" {
		t.Errorf("object keys %q (no $required: typed, no default, not given)", keys)
	}
	if v, _ := obj.Prop("prot"); v.Str() != "given" {
		t.Errorf("$prot %v", v)
	}
	w := c.Written(obj, true)
	b, _ := phpser.Encode(w)
	if want := `O:31:"App\Jobs\Classes\KitchenSinkJob":2:{s:5:"label";s:5:"other";s:7:"` + "\x00*\x00" + `prot";s:5:"given";}`; string(b) != want {
		t.Errorf("written %q, want %q", b, want)
	}
	if c.Written(obj, false) != obj {
		t.Error("before 9.4 SerializesModels writes everything")
	}
	n := m.Class(`App\Jobs\Classes\NativeJob`)
	nobj, _ := n.Object(nil)
	if n.Written(nobj, true) != nobj || nobj.Len() != 3 {
		t.Errorf("native: %v", nobj)
	}

	for _, bad := range []struct {
		e    phpser.Entry
		want string
	}{
		{phpser.PublicProp("Count", phpser.Int(1)), "has no property $Count (it has $count"},
		{phpser.PublicProp("nope", phpser.Int(1)), "has no property $nope"},
		{phpser.ProtectedProp("count", phpser.Int(1)), `$count is public ("count")`},
		{phpser.PrivateProp(`Other`, "priv", phpser.Int(1)), "$priv is private"},
	} {
		if _, err := c.Object([]phpser.Entry{bad.e}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: %v, want %q", bad.e.Key.Str(), err, bad.want)
		}
	}
}
