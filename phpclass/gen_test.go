package phpclass_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpclass"
)

// goPackageDir makes a directory for a Go package inside the module (so that it imports
// laraq), which the go tool leaves out of ./... (its name starts with "_"), removed after
// the test.
func goPackageDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(filepath.Join(testenv.RepoRoot(), "phpclass"), "_gentest")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// goTool runs the go tool in the repository.
func goTool(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestGenerateCompilesAndChecksClean: what gen writes for every class of 8.83 and 13.x
// is gofmt'ed, builds, passes go vet, and Check finds nothing to say about its own
// types (warnings included): gen and Check read the facts alike.
func TestGenerateCompilesAndChecksClean(t *testing.T) {
	for _, name := range []string{"L8", "L13"} {
		t.Run(name, func(t *testing.T) {
			m := fixture(t, name)
			g, err := phpclass.Generate(m, phpclass.GenOptions{Package: "gen" + strings.ToLower(name)})
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Types) != len(m.Classes) {
				t.Fatalf("%d types for %d classes", len(g.Types), len(m.Classes))
			}
			want := []string{
				`App\Jobs\Classes\MethodsJob::backoff()`, `App\Jobs\Classes\MethodsJob::displayName()`, `App\Jobs\Classes\MethodsJob::retryUntil()`,
				`App\Jobs\Classes\MethodsJob::tries()`, `App\Jobs\Classes\UniqueMethodJob::uniqueFor()`, `App\Jobs\Classes\UniqueMethodJob::uniqueId()`}
			todo := append([]string(nil), g.Todo...)
			sort.Strings(todo)
			if fmt.Sprint(todo) != fmt.Sprint(want) {
				t.Errorf("methods to port %v, want %v", todo, want)
			}
			dir := goPackageDir(t)
			if err := os.WriteFile(filepath.Join(dir, "jobs.go"), g.Source, 0o644); err != nil {
				t.Fatal(err)
			}
			var types []string
			for class, goName := range g.Types {
				types = append(types, fmt.Sprintf("\t%s: reflect.TypeFor[%s](),\n", strconv.Quote(class), goName))
			}
			sort.Strings(types)
			test := fmt.Sprintf(`package gen%s

import (
	"reflect"
	"testing"

	"github.com/laraq/laraq/phpclass"
)

var types = map[string]reflect.Type{
%s}

func TestCheckClean(t *testing.T) {
	m, err := phpclass.Load(%s)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range phpclass.CheckAll(m, types) {
		t.Errorf("%%s", p)
	}
}
`, strings.ToLower(name), strings.Join(types, ""), strconv.Quote(testenv.Testdata("phpclass", "manifest-"+name+".json")))
			if err := os.WriteFile(filepath.Join(dir, "check_test.go"), []byte(test), 0o644); err != nil {
				t.Fatal(err)
			}
			pkg := "./" + filepath.ToSlash(strings.TrimPrefix(dir, testenv.RepoRoot()+"/"))
			goTool(t, "vet", pkg)
			goTool(t, "test", "-count=1", pkg)
		})
	}
}
