package phpclass_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpclass"
)

// TestManifestRoundTrip: a manifest written and read back is the same file, and its
// defaults decode.
func TestManifestRoundTrip(t *testing.T) {
	for _, name := range []string{"L8", "L13"} {
		raw, err := os.ReadFile(testenv.Testdata("phpclass", "manifest-"+name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		m, err := phpclass.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := m.Write(&b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), raw) {
			t.Errorf("%s: written back differently", name)
		}
		c := m.Class(`\app\jobs\classes\kitchensinkjob`) // PHP class names ignore case
		if c == nil || c.Name != `App\Jobs\Classes\KitchenSinkJob` {
			t.Fatalf("%s: Class() by another case: %v", name, c)
		}
		if d := c.Property("count").DefaultValue(); d == nil || d.Int() != 3 {
			t.Errorf("%s: $count's default %v", name, d)
		}
		if d := c.Property("required").DefaultValue(); d != nil {
			t.Errorf("%s: $required has a default %v", name, d)
		}
	}
}

// TestParseRefusesBadManifests: each broken manifest is an error saying where.
func TestParseRefusesBadManifests(t *testing.T) {
	prop := func(p string) string {
		return `{"format":1,"laravel":"12.0.0","php":"8.2","classes":[{"name":"App\\Jobs\\X","interfaces":[],"serialization":"native","order_verified":true,"properties":[` + p + `]}]}`
	}
	for _, c := range []struct{ doc, want string }{
		{`{"format":2,"classes":[]}`, "manifest format 2"},
		{`{"format":1,"classes":[]} {}`, "trailing data"},
		{`[1,2]`, "not a class manifest"},
		{`{"format":1,"classes":[],"extra":1}`, `unknown field "extra"`},
		{`{"format":1,"classes":[{"name":"App\\Jobs\\1X","interfaces":[],"serialization":"native","properties":[]}]}`, `classes[0]: "App\\Jobs\\1X" is not a PHP class name`},
		{`{"format":1,"classes":[{"name":"A","interfaces":[],"serialization":"native","properties":[]},{"name":"a","interfaces":[],"serialization":"native","properties":[]}]}`, "classes[1] (a): the class is also classes[0]"},
		{`{"format":1,"classes":[{"name":"A","interfaces":[],"serialization":"json","properties":[]}]}`, `classes[0] (A): serialization "json"`},
		{prop(`{"name":"a","key":"a","visibility":"protected","declared_by":"X","from":"X","has_default":false}`), `properties[0] (a): key "a" is not the protected property a`},
		{prop(`{"name":"a","key":"\u0000*\u0000a","visibility":"protected","declared_by":"X","from":"X","has_default":true,"default":"i:3"}`), "properties[0] (a): default:"},
		{prop(`{"name":"a","key":"a","visibility":"public","declared_by":"X","from":"X","has_default":false,"default":"i:3;"}`), "has_default is false"},
		{prop(`{"name":"a","key":"a","visibility":"public","declared_by":"X","from":"X","has_default":true}`), "has_default without a default"},
		{prop(`{"name":"a","key":"a","visibility":"public","declared_by":"X","from":"X","has_default":true,"default":"N;"},{"name":"a","key":"a","visibility":"public","declared_by":"X","from":"X","has_default":true,"default":"N;"}`), "properties[1] (a): the property is also properties[0]"},
		{prop(`{"name":"a b","key":"a b","visibility":"public","declared_by":"X","from":"X","has_default":false}`), `"a b" is not a PHP property name`},
	} {
		_, err := phpclass.Parse([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.doc, err, c.want)
		}
	}
	if _, err := phpclass.Load("no-such-manifest.json"); err == nil || !strings.Contains(err.Error(), "no-such-manifest.json") {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// FuzzParse: a manifest from outside never panics the reader, and what it accepts it
// writes back to something it accepts again, the same.
func FuzzParse(f *testing.F) {
	// One class per seed of the golden manifests keeps each run quick.
	for _, name := range []string{"L8", "L13"} {
		m, err := phpclass.Load(testenv.Testdata("phpclass", "manifest-"+name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		for _, c := range []string{"KitchenSinkJob", "UniqueMethodJob", "AttributedJob", "InheritedModelsJob"} {
			one := *m
			one.Classes = []phpclass.Class{*m.Class(`App\Jobs\Classes\` + c)}
			var b bytes.Buffer
			if err := one.Write(&b); err != nil {
				f.Fatal(err)
			}
			f.Add(b.Bytes())
		}
	}
	f.Add([]byte(`{"format":1,"classes":[{"name":"A","interfaces":[],"serialization":"native","properties":[{"name":"a","key":"\u0000A\u0000a","visibility":"private","declared_by":"A","from":"A","has_default":true,"default":"a:1:{i:0;E:3:\"E:C\";}"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := phpclass.Parse(data)
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := m.Write(&b); err != nil {
			t.Fatal(err)
		}
		m2, err := phpclass.Parse(b.Bytes())
		if err != nil {
			t.Fatalf("written back, it does not read: %v\n%s", err, b.Bytes())
		}
		var b2 bytes.Buffer
		if err := m2.Write(&b2); err != nil || !bytes.Equal(b.Bytes(), b2.Bytes()) {
			t.Fatalf("not stable: %v", err)
		}
		for i := range m.Classes {
			_ = m.Class(m.Classes[i].Name)
		}
	})
}
