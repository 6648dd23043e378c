package phpser_test

import (
	"reflect"
	"testing"

	"github.com/laraq/laraq/phpser"
)

type viewInner struct {
	Job  any    `php:"job,default=null"`
	Note string `php:"note,private=App\\Base"`
}

type viewJob struct {
	OrderID  int    `php:"orderId,protected,default=3"`
	Secret   string `php:"secret,private"`
	Untagged string
	Skipped  int     `php:"-"`
	When     *string `php:"when,omitempty,class=DateTimeImmutable"`
	viewInner
}

func (viewJob) PHPClass() string          { return `App\Jobs\View` }
func (viewJob) PHPSerializesModels() bool { return false }

func TestFieldsIsTheCodecsView(t *testing.T) {
	fs, err := phpser.Fields(reflect.TypeFor[*viewJob]())
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		name, goName string
		vis          phpser.Visibility
		class        string
		tagged, omit bool
		objClass     string
		def          string
		via          int
	}
	wants := []want{
		{"orderId", "OrderID", phpser.Protected, "", true, false, "", "i:3;", 0},
		{"secret", "Secret", phpser.Private, `App\Jobs\View`, true, false, "", "", 0},
		{"Untagged", "Untagged", phpser.Public, "", false, false, "", "", 0},
		{"when", "When", phpser.Public, "", true, true, "DateTimeImmutable", "", 0},
		{"job", "Job", phpser.Public, "", true, false, "", "N;", 1},
		{"note", "Note", phpser.Private, `App\Base`, true, false, "", "", 1},
	}
	if len(fs) != len(wants) {
		t.Fatalf("%d fields, want %d: %+v", len(fs), len(wants), fs)
	}
	for i, w := range wants {
		f := fs[i]
		def := ""
		if f.Default != nil {
			b, _ := phpser.Encode(f.Default)
			def = string(b)
		}
		got := want{f.Name, f.GoName, f.Visibility, f.Class, f.Tagged, f.OmitEmpty, f.ObjClass, def, len(f.Via)}
		if got != w {
			t.Errorf("field %d: %+v, want %+v", i, got, w)
		}
	}
	if fs[4].Via[0] != reflect.TypeFor[viewInner]() {
		t.Errorf("job comes via %v", fs[4].Via)
	}
	if uses, ok := phpser.SerializesModels(reflect.TypeFor[viewJob]()); uses || !ok {
		t.Errorf("SerializesModels = %v, %v; want false, true", uses, ok)
	}
	if _, ok := phpser.SerializesModels(reflect.TypeFor[viewInner]()); ok {
		t.Error("a type without PHPSerializesModels says something")
	}
	if _, err := phpser.Fields(reflect.TypeFor[struct {
		X int `php:"x,bogus"`
	}]()); err == nil {
		t.Error("a bad tag is no error")
	}
}
