package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpclass"
	"github.com/laraq/laraq/phpser"
)

// fixtureManifest is the golden manifest of Laravel 13's test classes.
func fixtureManifest(t *testing.T) (string, *phpclass.Manifest) {
	t.Helper()
	path := testenv.Testdata("phpclass", "manifest-L13.json")
	m, err := phpclass.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, m
}

// TestClassesAndGen: `laraq classes` asks PHP (8.83 here) and writes the manifest,
// `laraq gen` writes Go from it or from the application directly and names the methods
// to port; mistakes in the command line are usage errors, a class PHP cannot load an
// error naming it.
func TestClassesAndGen(t *testing.T) {
	testenv.NeedPHP(t)
	dir := t.TempDir()
	autoload := testenv.Testdata("php", "classes_autoload.php")
	manifest := filepath.Join(dir, "classes.json")
	_, errOut, rc := runCLI(t, nil, "classes", "--autoload", autoload, `App\Jobs\Classes\NativeJob`, `App\Jobs\Classes\UniqueMethodJob`, "-o", manifest)
	if rc != 0 {
		t.Fatalf("classes: exit %d: %s", rc, errOut)
	}
	if !strings.Contains(errOut, "2 classes (Laravel 8.83.") {
		t.Errorf("classes said %q", errOut)
	}
	m, err := phpclass.Load(manifest)
	if err != nil || len(m.Classes) != 2 || m.Class(`App\Jobs\Classes\UniqueMethodJob`) == nil {
		t.Fatalf("the manifest: %v %+v", err, m)
	}

	out, errOut, rc := runCLI(t, nil, "gen", "--classes", manifest, "--package", "billing")
	if rc != 0 {
		t.Fatalf("gen: exit %d: %s", rc, errOut)
	}
	for _, want := range []string{"package billing", "type NativeJob struct", "func (UniqueMethodJob) ShouldBeUniqueUntilProcessing() {}"} {
		if !strings.Contains(out, want) {
			t.Errorf("gen wrote no %q:\n%s", want, out)
		}
	}
	if !strings.Contains(errOut, `App\Jobs\Classes\UniqueMethodJob::uniqueId()`) {
		t.Errorf("gen did not name the methods to port: %q", errOut)
	}
	// From the application itself, one class, into a file.
	goFile := filepath.Join(dir, "jobs.go")
	if _, errOut, rc := runCLI(t, nil, "gen", "--autoload", autoload, "-o", goFile, `App\Jobs\Classes\NativeJob`); rc != 0 {
		t.Fatalf("gen --autoload: exit %d: %s", rc, errOut)
	}
	if b, _ := os.ReadFile(goFile); !bytes.Contains(b, []byte("type NativeJob struct")) || bytes.Contains(b, []byte("UniqueMethodJob")) {
		t.Errorf("gen -o wrote:\n%s", b)
	}

	for _, c := range []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"classes"}, 2, "give the application (--laravel-root DIR) or an autoload file"},
		{[]string{"classes", "--autoload", autoload, `App\Jobs\Classes\Nope`}, 1, `App\Jobs\Classes\Nope: not found by the autoloader`},
		{[]string{"gen"}, 2, "give the facts"},
		{[]string{"gen", "--classes", manifest, "--autoload", autoload}, 2, "not both"},
		{[]string{"gen", "--classes", manifest, `App\Jobs\Other`}, 1, `the manifest has no class App\Jobs\Other`},
		{[]string{"gen", "--classes", filepath.Join(dir, "missing.json")}, 1, "missing.json"},
	} {
		_, errOut, rc := runCLI(t, nil, c.args...)
		if rc != c.rc || !strings.Contains(errOut, c.want) {
			t.Errorf("laraq %s: exit %d, %q; want exit %d saying %q", strings.Join(c.args, " "), rc, errOut, c.rc, c.want)
		}
	}
}

// Go types of App\Jobs\Classes\UniquePropJob (Laravel 13): one written by hand with a
// case typo, one right.
type propJobTypo struct {
	UniqueIDProp  any `php:"uniqueId,default=null"`
	UniqueForProp int `php:"uniqueFor,default=30"`
	OrderID       any `php:"orderID,default=null"`
	laraq.Queueable
}

func (propJobTypo) PHPClass() string            { return `App\Jobs\Classes\UniquePropJob` }
func (propJobTypo) UniqueID() string            { return "" }
func (propJobTypo) UniqueFor() time.Duration    { return 0 }
func (propJobRight) PHPClass() string           { return `App\Jobs\Classes\UniquePropJob` }
func (j propJobRight) UniqueID() string         { return fmt.Sprint(j.UniqueIDProp) }
func (j propJobRight) UniqueFor() time.Duration { return time.Duration(j.UniqueForProp) * time.Second }

type propJobRight struct {
	UniqueIDProp  any `php:"uniqueId,default=null"`
	UniqueForProp int `php:"uniqueFor,default=30"`
	OrderID       any `php:"orderId,default=null"`
	laraq.Queueable
}

// TestWorkChecksItsTypes: with a manifest, a worker whose Go type mistakes its class
// exits 1 before it takes a job (laraq.NewWorker refuses it), naming class, property and
// fix; with the right type it works; a manifest that does not read is an error.
func TestWorkChecksItsTypes(t *testing.T) {
	path, _ := fixtureManifest(t)
	work := func(jobs *laraq.Jobs, env map[string]string, args ...string) (string, int) {
		var out, errOut bytes.Buffer
		rc := Main(context.Background(), append([]string{"work"}, args...), WithJobs(jobs), WithIO(nil, &out, &errOut),
			WithGetenv(func(k string) string { return env[k] }))
		return errOut.String(), rc
	}
	bad := laraq.NewJobs()
	laraq.Declare[propJobTypo](bad)
	errOut, rc := work(bad, nil, "--classes", path, "--redis", "redis://127.0.0.1:1/0", "--database", "null", "--stop-when-empty")
	if rc != 1 || !strings.Contains(errOut, `App\Jobs\Classes\UniquePropJob $orderId (Go field OrderID)`) || !strings.Contains(errOut, "`php:\"orderId\"`") {
		t.Errorf("a mistyped worker: exit %d:\n%s", rc, errOut)
	}
	// LARAQ_CLASSES names the manifest too.
	if errOut, rc := work(bad, map[string]string{"LARAQ_CLASSES": path}, "--redis", "redis://127.0.0.1:1/0", "--database", "null"); rc != 1 || !strings.Contains(errOut, "differs from PHP's $orderId in case only") {
		t.Errorf("LARAQ_CLASSES: exit %d:\n%s", rc, errOut)
	}
	broken := filepath.Join(t.TempDir(), "broken.json")
	if err := os.WriteFile(broken, []byte(`{"format":9}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if errOut, rc := work(bad, nil, "--classes", broken); rc != 1 || !strings.Contains(errOut, "--classes: "+broken+": phpclass: manifest format 9") {
		t.Errorf("a broken manifest: exit %d:\n%s", rc, errOut)
	}

	r := testenv.RedisServer(t)
	good := laraq.NewJobs()
	laraq.Declare[propJobRight](good)
	if errOut, rc := work(good, nil, "--classes", path, "--redis", "redis://"+r.Addr+"/0", "--prefix", testenv.Prefix(t),
		"--laravel-version", "13.26", "--database", "null", "--stop-when-empty", "--sleep", "0"); rc != 0 {
		t.Errorf("the right type: exit %d:\n%s", rc, errOut)
	}
}

// TestDecodeShowsClassFacts: with the manifest, decode names each property's visibility
// and which ones PHP left out at their default or never set.
func TestDecodeShowsClassFacts(t *testing.T) {
	path, m := fixtureManifest(t)
	c := m.Class(`App\Jobs\Classes\KitchenSinkJob`)
	obj, err := c.Object([]phpser.Entry{phpser.PublicProp("prot", phpser.String("x")), phpser.PublicProp("label", phpser.String("y"))})
	if err != nil {
		t.Fatal(err)
	}
	cmd, _ := phpser.Encode(c.Written(obj, true))
	body, _ := json.Marshal(map[string]any{"uuid": "u", "displayName": c.Name, "job": "Illuminate\\Queue\\CallQueuedHandler@call",
		"data": map[string]any{"commandName": c.Name, "command": string(cmd) + ""}, "id": "i", "attempts": 0})
	// A property the class does not declare, as another release might write it.
	body = bytes.Replace(body, []byte(`:2:{`), []byte(`:3:{s:5:\"extra\";i:1;`), 1)
	out, errOut, rc := runCLI(t, body, "decode", "--classes", path)
	if rc != 0 {
		t.Fatalf("decode: exit %d: %s", rc, errOut)
	}
	var doc struct {
		Data struct {
			Command map[string]any `json:"command"`
		} `json:"data"`
		Facts struct {
			Class      string `json:"class"`
			Properties []struct {
				Name, Visibility, From string
				InPayload              bool `json:"in_payload"`
				LeftOut                bool `json:"left_out"`
				Uninitialized          bool
				Default                json.RawMessage
			} `json:"properties"`
			NotInClass []string `json:"not_in_class"`
		} `json:"class_facts"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if doc.Data.Command["prot"] != "x" || doc.Facts.Class != c.Name || len(doc.Facts.NotInClass) != 1 || doc.Facts.NotInClass[0] != "extra" {
		t.Fatalf("decode --classes:\n%s", out)
	}
	got := map[string]string{}
	for _, p := range doc.Facts.Properties {
		got[p.Name] = fmt.Sprintf("%s in=%v out=%v unset=%v default=%s from=%s", p.Visibility, p.InPayload, p.LeftOut, p.Uninitialized, p.Default, p.From)
	}
	for name, want := range map[string]string{
		"prot":     "protected in=true out=false unset=false default=\"p\" from=",
		"label":    "public in=true out=false unset=false default=\"label\" from=",
		"count":    "public in=false out=true unset=false default=3 from=",
		"required": "public in=false out=false unset=true default= from=",
		"queue":    `public in=false out=true unset=false default=null from=Illuminate\Bus\Queueable`,
	} {
		if got[name] != want {
			t.Errorf("$%s: %s, want %s", name, got[name], want)
		}
	}
	// Without the manifest the document is what it always was.
	plain, _, _ := runCLI(t, body, "decode")
	if strings.Contains(plain, "class_facts") || !strings.HasPrefix(out, strings.TrimSuffix(plain, "\n}\n")) {
		t.Errorf("decode without --classes:\n%s", plain)
	}
}

// TestDispatchClassesRefusesMistakes: with the manifest, a property the class does not
// have (a case typo included) or a class the manifest lacks stops the dispatch.
func TestDispatchClassesRefusesMistakes(t *testing.T) {
	path, _ := fixtureManifest(t)
	for _, c := range []struct{ class, props, want string }{
		{`App\Jobs\Classes\UniquePropJob`, `{"orderID": 1}`, `has no property $orderID (it has $orderId: PHP property names are case-sensitive)`},
		{`App\Jobs\Classes\NativeJob`, `{"\u0000*\u0000a": 1}`, `$a is public ("a"), not as given`},
		{`App\Jobs\Elsewhere`, `{}`, `the manifest has no class App\Jobs\Elsewhere`},
	} {
		_, errOut, rc := runCLI(t, []byte(c.props), "dispatch", "--redis", "redis://127.0.0.1:1/0", "--laravel-version", "13.26", "--classes", path, c.class, "--props", "-")
		if rc != 1 || !strings.Contains(errOut, c.want) {
			t.Errorf("%s %s: exit %d, %q; want %q", c.class, c.props, rc, errOut, c.want)
		}
	}
}

// TestDispatchClassesQueueAndDelay: with the manifest, --queue and --delay set the
// Queueable properties where the class has them (in their place) and only choose the
// queue where it has none; a manifest of another release than the connection's is
// worth a warning.
func TestDispatchClassesQueueAndDelay(t *testing.T) {
	path, _ := fixtureManifest(t)
	r := testenv.RedisServer(t)
	prefix := testenv.Prefix(t)
	client := r.Client(t, 0)
	dispatch := func(class, props string, args ...string) (string, string) {
		t.Helper()
		out, errOut, rc := runCLI(t, []byte(props), append([]string{"dispatch", "--redis", "redis://" + r.Addr + "/0", "--prefix", prefix,
			"--classes", path, class, "--props", "-"}, args...)...)
		if rc != 0 {
			t.Fatalf("dispatch %s: exit %d: %s", class, rc, errOut)
		}
		return strings.TrimSpace(out), errOut
	}
	id, errOut := dispatch(`App\Jobs\Classes\NativeJob`, `{"a": 1}`, "--queue", "high", "--laravel-version", "12.40")
	if !strings.Contains(errOut, "warning: the manifest was read from Laravel 13.26.1, the connection is 12.40") {
		t.Errorf("no warning of the release: %q", errOut)
	}
	raw, delayed, _ := findPayload(t, client, prefix, "high", id)
	if raw == nil || delayed || !bytes.Contains(raw, []byte(`"command":"O:26:\"App\\Jobs\\Classes\\NativeJob\":3:{s:1:\"a\";i:1;s:4:\"\u0000*\u0000b\";i:2;s:29:\"\u0000App\\Jobs\\Classes\\NativeJob\u0000c\";s:1:\"c\";}"`)) {
		t.Errorf("NativeJob on high: %s", raw)
	}
	id, _ = dispatch(`App\Jobs\Classes\KitchenSinkJob`, `{"required": 1}`, "--queue", "q", "--delay", "5", "--laravel-version", "13.26")
	raw, delayed, _ = findPayload(t, client, prefix, "q", id)
	want := `s:8:\"required\";i:1;s:5:\"queue\";s:1:\"q\";s:5:\"delay\";i:5;}`
	if raw == nil || !delayed || !bytes.Contains(raw, []byte(want)) || !bytes.Contains(raw, []byte(`"delay":5`)) {
		t.Errorf("KitchenSinkJob on q, delayed: %v\n%s\nwant the command to end %s", delayed, raw, want)
	}
}
