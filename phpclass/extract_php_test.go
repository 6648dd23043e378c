package phpclass_test

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpclass"
)

var update = flag.Bool("update", false, "rewrite testdata/phpclass/manifest-L8.json and -L13.json from the peers (TestExtractFacts)")

// classesNS is the namespace of testdata/php/jobs_classes.php.
const classesNS = `App\Jobs\Classes\`

// testClasses are the classes of jobs_classes.php every release declares; unique and
// encrypted ones join from 8.x on as well (ShouldBeUnique, ShouldBeEncrypted: 8.x+).
var testClasses = []string{"KitchenSinkJob", "PromotedJob", "ModelsCarbonJob", "NativeJob", "InheritedJob",
	"InheritedModelsJob", "UniquePropJob", "UniqueMethodJob", "EncryptedJob", "MethodsJob", "AttributedJob", "ReversedTraitsJob"}

// extractFor reads the test classes on a release through classes_autoload.php.
func extractFor(t *testing.T, major int, classes ...string) *phpclass.Manifest {
	t.Helper()
	if len(classes) == 0 {
		for _, c := range testClasses {
			classes = append(classes, classesNS+c)
		}
	}
	m, err := phpclass.Extract(context.Background(), phpclass.Options{
		Root:     testenv.RepoRoot(),
		Autoload: testenv.Testdata("php", "classes_autoload.php"),
		Classes:  classes,
		Env:      testenv.PHPEnv{Major: major}.Environ(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func propNames(c *phpclass.Class, written bool) []string {
	var out []string
	for _, p := range c.Properties {
		if p.Unwritten == !written {
			out = append(out, p.Name)
		}
	}
	return out
}

// TestExtractFacts: on every release, PHP's reflection gives each property kind as the
// class declares it, the order serialize() writes (the parents' slots first natively,
// getProperties() order and no parent private property under SerializesModels, trait
// properties after the class's own), the interfaces, methods with their source, 13.x
// attributes, the enums, and the release itself.
func TestExtractFacts(t *testing.T) {
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		testenv.Since(t, major, testenv.ClassSamples)
		m := extractFor(t, major)
		if *update && (major == 8 || major == 13) {
			writeFixture(t, m, testenv.MajorName(major))
		}
		tag := strings.TrimPrefix(testenv.Peer(t, major).Tag, "v")
		if !strings.HasPrefix(m.Laravel, tag) || m.Laravel == "" {
			t.Errorf("Laravel %q from %q, want the peer's %s", m.Laravel, m.LaravelFrom, tag)
		}
		if len(m.Classes) != len(testClasses) {
			t.Fatalf("%d classes, want %d", len(m.Classes), len(testClasses))
		}
		for _, c := range m.Classes {
			if !c.OrderVerified {
				t.Errorf("%s: order not read back from serialize(): %s", c.Name, c.OrderNote)
			}
			if !strings.HasSuffix(c.File, "testdata/php/jobs_classes.php") || strings.HasPrefix(c.File, "/") {
				t.Errorf("%s: file %q, want testdata/php/jobs_classes.php relative to the root", c.Name, c.File)
			}
		}

		k := m.Class(classesNS + "KitchenSinkJob")
		if k.Serialization != phpclass.SerializesModelsSerialization || !k.Queueable() || !k.Uses(phpclass.InteractsWithQueue) {
			t.Errorf("KitchenSinkJob: serialization %q, traits %v", k.Serialization, k.Traits)
		}
		own := []string{"untyped", "untypedDefault", "count", "ratio", "label", "flag", "maybe", "nick", "list", "map", "mixed",
			"status", "suit", "either", "required", "prot", "protTyped", "priv", "privTyped", "job"}
		if got := propNames(k, true); strings.Join(got[:len(own)], ",") != strings.Join(own, ",") {
			t.Errorf("KitchenSinkJob order %v, want %v then Bus\\Queueable's", got, own)
		}
		for _, w := range []struct{ name, typ, def, vis, key string }{
			{"untyped", "", "N;", "public", "untyped"},
			{"count", "int", "i:3;", "public", "count"},
			{"ratio", "float", "d:1.5;", "public", "ratio"},
			{"maybe", "?int", "N;", "public", "maybe"},
			{"map", "array", `a:2:{s:1:"a";i:1;s:1:"b";a:2:{i:0;b:1;i:1;N;}}`, "public", "map"},
			{"mixed", "", `a:2:{i:10;s:3:"ten";s:1:"x";d:1;}`, "public", "mixed"},
			{"status", `App\Enums\Status`, `E:23:"App\Enums\Status:Active";`, "public", "status"},
			{"either", "string|int", "i:0;", "public", "either"},
			{"required", "int", "", "public", "required"},
			{"prot", "", `s:1:"p";`, "protected", "\x00*\x00prot"},
			{"priv", "", "a:1:{i:0;i:1;}", "private", "\x00" + classesNS + "KitchenSinkJob\x00priv"},
		} {
			p := k.Property(w.name)
			if p == nil || p.Type != w.typ || p.Default != w.def || p.HasDefault != (w.def != "") || p.Visibility != w.vis || p.Key != w.key {
				t.Errorf("KitchenSinkJob $%s: %+v, want type %q default %q %s key %q", w.name, p, w.typ, w.def, w.vis, w.key)
			}
		}
		if p := k.Property("job"); p.From != phpclass.InteractsWithQueue {
			t.Errorf("$job comes from %q", p.From)
		}
		if p := k.Property("queue"); p == nil || p.From != phpclass.BusQueueable {
			t.Errorf("$queue: %+v", p)
		}
		if p := k.Property("suit"); !p.Nullable || len(p.TypeNames) != 1 || p.TypeNames[0].Kind != "enum" {
			t.Errorf("$suit: %+v", p)
		}

		p := m.Class(classesNS + "PromotedJob")
		for _, n := range []string{"orderId", "user", "at"} {
			if pp := p.Property(n); !pp.Readonly || !pp.Promoted || pp.HasDefault {
				t.Errorf("PromotedJob $%s: %+v, want readonly, promoted, no default", n, pp)
			}
		}
		if pp := p.Property("note"); pp.Visibility != "protected" || !pp.Promoted || pp.HasDefault || pp.Readonly {
			t.Errorf("PromotedJob $note: %+v (a promoted property's default is the parameter's, not the property's)", pp)
		}
		if pp := p.Property("user"); pp.TypeNames[0].Kind != "model" {
			t.Errorf("PromotedJob $user: %+v", pp)
		}
		mc := m.Class(classesNS + "ModelsCarbonJob")
		for n, kind := range map[string]string{"user": "model", "maybeUser": "model", "users": "collection", "when": "date", "date": "date"} {
			if pp := mc.Property(n); len(pp.TypeNames) != 1 || pp.TypeNames[0].Kind != kind {
				t.Errorf("ModelsCarbonJob $%s: %+v, want a %s", n, pp, kind)
			}
		}

		// Native serialization writes the parents' slots first, their private ones too;
		// SerializesModels walks getProperties(): the class's own, the parents', the traits'.
		in := m.Class(classesNS + "InheritedJob")
		if got := strings.Join(propNames(in, true)[:7], ","); in.Serialization != phpclass.NativeSerialization || got != "basePub,baseProt,basePriv,own,tag,tagged,job" {
			t.Errorf("InheritedJob (%s): %s", in.Serialization, got)
		}
		if pp := in.Property("basePriv"); pp.Key != "\x00"+classesNS+"BaseJob\x00basePriv" || pp.DeclaredBy != classesNS+"BaseJob" {
			t.Errorf("InheritedJob $basePriv: %+v", pp)
		}
		if pp := in.Property("tag"); pp.From != classesNS+"HasTag" {
			t.Errorf("InheritedJob $tag from %q", pp.From)
		}
		im := m.Class(classesNS + "InheritedModelsJob")
		if got := strings.Join(propNames(im, true)[:6], ","); got != "own,basePub,baseProt,tag,tagged,job" {
			t.Errorf("InheritedModelsJob: %s", got)
		}
		if got := propNames(im, false); len(got) != 1 || got[0] != "basePriv" {
			t.Errorf("InheritedModelsJob unwritten %v, want basePriv", got)
		}
		if n := m.Class(classesNS + "NativeJob"); n.Queueable() || n.Serialization != phpclass.NativeSerialization || strings.Join(propNames(n, true), ",") != "a,b,c" {
			t.Errorf("NativeJob: %+v", n)
		}
		rt := m.Class(classesNS + "ReversedTraitsJob")
		if names := propNames(rt, true); names[0] != "n" || names[1] != "batchId" || names[len(names)-1] != "job" {
			t.Errorf("ReversedTraitsJob: %v", names)
		}

		u := m.Class(classesNS + "UniqueMethodJob")
		if !u.Unique() || !u.UniqueUntilProcessing() || u.Encrypted() {
			t.Errorf("UniqueMethodJob interfaces %v", u.Interfaces)
		}
		if mm := u.Method("uniqueId"); mm == nil || !strings.Contains(mm.Source, "return 'order-' . $this->orderId;") || mm.DeclaredBy != u.Name {
			t.Errorf("UniqueMethodJob uniqueId(): %+v", mm)
		}
		if e := m.Class(classesNS + "EncryptedJob"); !e.Encrypted() || e.Unique() {
			t.Errorf("EncryptedJob interfaces %v", e.Interfaces)
		}
		if mm := m.Class(classesNS + "MethodsJob").Method("backoff"); mm == nil || !strings.HasPrefix(mm.Source, "/** Seconds between attempts. */\npublic function backoff()") {
			t.Errorf("MethodsJob backoff(): %+v", mm)
		}
		a := m.Class(classesNS + "AttributedJob").Attribute(`Illuminate\Queue\Attributes\Backoff`)
		if a == nil || len(a.Arguments) != 2 || a.Arguments[0].Value != "i:1;" || a.Arguments[1].Value != "i:3;" {
			t.Errorf("AttributedJob #[Backoff]: %+v", a)
		}
		if e := m.Enum(`App\Enums\Status`); e == nil || e.Backing != "string" || len(e.Cases) != 2 || e.Cases[1].Name != "Suspended" || e.Cases[1].Value != `s:9:"suspended";` {
			t.Errorf("enum Status: %+v", e)
		}
		if e := m.Enum(`App\Enums\Suit`); e == nil || e.Backing != "" || len(e.Cases) != 2 {
			t.Errorf("enum Suit: %+v", e)
		}
	})
}

// TestExtractBadInput: no php, a class that does not load, an autoload file that throws,
// a class whose file does not parse and a fatal error while a class is declared each
// give an error naming what failed.
func TestExtractBadInput(t *testing.T) {
	testenv.NeedPHP(t)
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("Broken.php", "<?php namespace App\\Jobs; class Broken implements \\Illuminate\\Contracts\\Queue\\ShouldQueue { public $a = ; }\n")
	write("Twice.php", "<?php namespace App\\Jobs; class Twice implements \\Illuminate\\Contracts\\Queue\\ShouldQueue { function a() {} function a() {} }\n")
	autoload := write("autoload.php", `<?php
namespace Illuminate\Contracts\Queue { interface ShouldQueue {} }
namespace {
	echo "noise the application prints\n";
	spl_autoload_register(function ($c) {
		$f = __DIR__ . '/' . substr($c, strlen('App\\Jobs\\')) . '.php';
		if (strncmp($c, 'App\\Jobs\\', 9) === 0 && is_file($f)) { require $f; }
	});
	class_alias('Illuminate\Contracts\Queue\ShouldQueue', 'ShouldQueueAlias');
}
namespace App\Jobs { class Fine implements \Illuminate\Contracts\Queue\ShouldQueue { public $x = 1; } }
`)
	throws := write("throws.php", "<?php throw new RuntimeException('no database');\n")
	ctx := context.Background()

	m, err := phpclass.Extract(ctx, phpclass.Options{Autoload: autoload, Classes: []string{`App\Jobs\Fine`}})
	if err != nil || len(m.Classes) != 1 || m.Classes[0].Property("x").Default != "i:1;" {
		t.Fatalf("a fine class: %v %+v (the application's output must not disturb the facts)", err, m)
	}
	// Without a class named and no composer.json, the classes the autoload file declared.
	if m, err := phpclass.Extract(ctx, phpclass.Options{Autoload: autoload}); err != nil || len(m.Classes) != 1 || m.Classes[0].Name != `App\Jobs\Fine` {
		t.Errorf("discovery: %v %+v", err, m)
	}
	for _, c := range []struct {
		name string
		o    phpclass.Options
		want []string
	}{
		{"no php", phpclass.Options{PHP: "php-that-is-not-there", Autoload: autoload}, []string{"php-that-is-not-there not found"}},
		{"missing class", phpclass.Options{Autoload: autoload, Classes: []string{`App\Jobs\Missing`}}, []string{`App\Jobs\Missing`, "not found by the autoloader"}},
		{"autoload throws", phpclass.Options{Autoload: throws}, []string{"throws.php", "no database"}},
		{"no autoload file", phpclass.Options{Autoload: filepath.Join(dir, "nope.php")}, []string{"nope.php"}},
		{"parse error", phpclass.Options{Autoload: autoload, Classes: []string{`App\Jobs\Broken`}}, []string{`App\Jobs\Broken`, "ParseError", "Broken.php"}},
		{"fatal", phpclass.Options{Autoload: autoload, Classes: []string{`App\Jobs\Twice`}}, []string{`App\Jobs\Twice`, "Cannot redeclare", "Twice.php"}},
	} {
		_, err := phpclass.Extract(ctx, c.o)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want it to say %q", c.name, err, w)
			}
		}
	}
	var fe *phpclass.FatalError
	if _, err := phpclass.Extract(ctx, phpclass.Options{Autoload: autoload, Classes: []string{`App\Jobs\Twice`}}); !errors.As(err, &fe) {
		t.Errorf("a fatal error is a %T", err)
	}
}

// writeFixture saves a manifest as testdata/phpclass/manifest-NAME.json, the seeds of
// the fuzz target and the input of the tests that need no PHP.
func writeFixture(t *testing.T, m *phpclass.Manifest, name string) {
	t.Helper()
	f, err := os.Create(testenv.Testdata("phpclass", "manifest-"+name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := m.Write(f); err != nil {
		t.Fatal(err)
	}
}

// TestExtractDiscoversPSR4: with no class named, every concrete ShouldQueue class under
// the application's composer.json PSR-4 roots is read (a listener and a class in a
// subdirectory included; an abstract job, a plain class and a file that declares no
// class left out), files are named relative to the application, and a file there that
// does not parse is an error naming it.
func TestExtractDiscoversPSR4(t *testing.T) {
	testenv.NeedPHP(t)
	root := t.TempDir()
	write := func(name, src string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("composer.json", `{"autoload": {"psr-4": {"App\\": "app/", "Domain\\": ["src/"]}}}`)
	write("vendor/autoload.php", `<?php
namespace Illuminate\Contracts\Queue { interface ShouldQueue {} }
namespace {
	spl_autoload_register(function ($c) {
		foreach (['App\\' => '/../app/', 'Domain\\' => '/../src/'] as $p => $d) {
			$f = __DIR__ . $d . str_replace('\\', '/', substr($c, strlen($p))) . '.php';
			if (strncmp($c, $p, strlen($p)) === 0 && is_file($f)) { require $f; }
		}
	});
}
`)
	write("app/Jobs/SendInvoice.php", "<?php namespace App\\Jobs; class SendInvoice implements \\Illuminate\\Contracts\\Queue\\ShouldQueue { public $orderId; }\n")
	write("app/Jobs/BaseJob.php", "<?php namespace App\\Jobs; abstract class BaseJob implements \\Illuminate\\Contracts\\Queue\\ShouldQueue {}\n")
	write("app/Jobs/Billing/Refund.php", "<?php namespace App\\Jobs\\Billing; class Refund extends \\App\\Jobs\\BaseJob { protected $amount = 0; }\n")
	write("app/Listeners/SendShipmentNotice.php", "<?php namespace App\\Listeners; class SendShipmentNotice implements \\Illuminate\\Contracts\\Queue\\ShouldQueue { public function handle($e) {} }\n")
	write("app/Models/User.php", "<?php namespace App\\Models; class User {}\n")
	write("app/helpers.php", "<?php function app_helper() {}\n")
	write("src/Orders/Ship.php", "<?php namespace Domain\\Orders; class Ship implements \\Illuminate\\Contracts\\Queue\\ShouldQueue {}\n")
	ctx := context.Background()
	m, err := phpclass.Extract(ctx, phpclass.Options{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range m.Classes {
		names = append(names, c.Name)
	}
	want := `App\Jobs\Billing\Refund,App\Jobs\SendInvoice,App\Listeners\SendShipmentNotice,Domain\Orders\Ship`
	if strings.Join(names, ",") != want {
		t.Errorf("discovered %v, want %s", names, want)
	}
	if c := m.Class(`App\Jobs\SendInvoice`); c == nil || c.File != "app/Jobs/SendInvoice.php" {
		t.Errorf("SendInvoice: %+v", c)
	}

	write("app/Jobs/Broken.php", "<?php namespace App\\Jobs; class Broken implements \\Illuminate\\Contracts\\Queue\\ShouldQueue { public $a = ; }\n")
	_, err = phpclass.Extract(ctx, phpclass.Options{Root: root})
	var ce *phpclass.ClassError
	if !errors.As(err, &ce) || ce.Class != `App\Jobs\Broken` || ce.File != "app/Jobs/Broken.php" || !strings.Contains(ce.Err, "ParseError") {
		t.Errorf("a file that does not parse: %v", err)
	}
}
