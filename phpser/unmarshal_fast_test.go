package phpser

import (
	"reflect"
	"strings"
	"testing"
)

type fastTarget struct {
	I   int     `php:"i"`
	I64 int64   `php:"i64"`
	I8  int8    `php:"i8"`
	S   string  `php:"s"`
	PS  *string `php:"ps"`
	PN  *string `php:"pn"`
	B   bool    `php:"b"`
	F   float64 `php:"f"`
	E   suit    `php:"e"`
}

// behindPointer holds the same fields behind an embedded pointer, where Unmarshal always
// uses the fields' own decoders.
type behindPointer struct{ *fastTarget }

// What a property stores straight into memory must equal what the field's decoder
// makes of it, for values of the field's kind and for every other kind too.
func TestUnmarshalFastFieldsMatchDecoders(t *testing.T) {
	values := []string{`N;`, `b:1;`, `b:0;`, `i:7;`, `i:-300;`, `d:2.5;`, `d:3;`, `s:2:"hi";`, `s:0:"";`,
		`E:14:"Fx\Suit:Hearts";`, `a:0:{}`, `O:8:"stdClass":0:{}`}
	names := []string{"i", "i64", "i8", "s", "ps", "pn", "b", "f", "e"}
	for _, name := range names {
		for _, val := range values {
			// The same property twice: the second write meets the first's result
			// (an allocated *string, say), as a real payload's duplicate key would.
			in := `O:3:"Foo":2:{s:` + itoa(len(name)) + `:"` + name + `";` + val +
				`s:` + itoa(len(name)) + `:"` + name + `";` + val + `}`
			var direct fastTarget
			errDirect := Unmarshal([]byte(in), &direct)
			general := behindPointer{new(fastTarget)}
			errGeneral := Unmarshal([]byte(in), &general)
			if (errDirect == nil) != (errGeneral == nil) || (errDirect != nil && errDirect.Error() != errGeneral.Error()) {
				t.Errorf("%s: errors differ: %v / %v", in, errDirect, errGeneral)
				continue
			}
			if !reflect.DeepEqual(direct, *general.fastTarget) {
				t.Errorf("%s:\ndirect  %+v\ngeneral %+v", in, direct, *general.fastTarget)
			}
		}
	}
	var got fastTarget
	in := `a:7:{s:1:"i";i:-5;s:3:"i64";i:9223372036854775807;s:1:"s";s:3:"abc";s:2:"ps";s:1:"x";` +
		`s:2:"pn";N;s:1:"b";b:1;s:1:"f";d:-0.5;}`
	if err := Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	if got.I != -5 || got.I64 != 1<<63-1 || got.S != "abc" || got.PS == nil || *got.PS != "x" || got.PN != nil ||
		!got.B || got.F != -0.5 {
		t.Errorf("got %+v", got)
	}
}

type fastLists struct {
	I  []int64   `php:"i"`
	RI []int64   `php:"ri"`
	S  []string  `php:"s"`
	RS []string  `php:"rs"`
	P  []*string `php:"p"`
	RP []*string `php:"rp"`
	B  []bool    `php:"b"`
	RB []bool    `php:"rb"`
	F  []float64 `php:"f"`
	RF []float64 `php:"rf"`
}

// A list reached through a PHP reference (R:) is mapped by its elements' decoders;
// the same list in place takes the fast path: both must come out the same, for
// elements of the list's own kind and of every other.
func TestUnmarshalFastListsMatchDecoders(t *testing.T) {
	elems := []string{`N;`, `b:1;`, `i:-4;`, `d:0.5;`, `d:2;`, `s:1:"x";`, `a:0:{}`}
	for _, name := range []string{"i", "s", "p", "b", "f"} {
		for _, el := range elems {
			list := `a:3:{i:0;` + el + `i:1;` + el + `i:2;` + el + `}`
			// Values are numbered from 1: the object, then the list, so R:2.
			in := `O:3:"Foo":2:{s:1:"` + name + `";` + list + `s:2:"r` + name + `";R:2;}`
			var got fastLists
			err := Unmarshal([]byte(in), &got)
			rv := reflect.ValueOf(got)
			direct := rv.FieldByName(strings.ToUpper(name)).Interface()
			viaRef := rv.FieldByName("R" + strings.ToUpper(name)).Interface()
			if err != nil {
				// Both fail alike or the first one fails: nothing to compare.
				if !strings.Contains(err.Error(), "Foo."+name) {
					t.Errorf("%s: error %v names neither", in, err)
				}
				continue
			}
			if !reflect.DeepEqual(direct, viaRef) {
				t.Errorf("%s:\nin place %#v\nvia R:    %#v", in, direct, viaRef)
			}
		}
	}
}
