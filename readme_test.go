package laraq_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// readmeImports are the packages the README's Go snippets may name, by the name they use.
var readmeImports = map[string]string{
	"laraq":   "github.com/laraq/laraq",
	"laravel": "github.com/laraq/laraq/laravel",
	"phpser":  "github.com/laraq/laraq/phpser",
	"cli":     "github.com/laraq/laraq/cli",
	"context": "context",
	"log":     "log",
	"os":      "os",
	"signal":  "os/signal",
	"syscall": "syscall",
	"time":    "time",
}

// TestReadmeSnippetsCompile type-checks the README's Go snippets against the code, as one
// file of declarations with the imports they name: a name that no longer exists, or a
// call that no longer fits its signature, fails here. Only "declared and not used" is
// forgiven, since a snippet may show a value it does nothing with.
func TestReadmeSnippetsCompile(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) < 3 {
		t.Fatalf("the README has %d Go snippets; it shows a worker, a dispatch and the command line", len(blocks))
	}
	var body strings.Builder
	for _, b := range blocks {
		body.Write(b[1])
		body.WriteString("\n")
	}
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b([a-z][a-z0-9]*)\.[A-Z]`).FindAllStringSubmatch(body.String(), -1) {
		used[m[1]] = true
	}
	var imports []string
	for name := range used {
		path, ok := readmeImports[name]
		if !ok {
			continue // a field or method of a value, not a package
		}
		imports = append(imports, `"`+path+`"`)
	}
	sort.Strings(imports)
	src := "package readme\n\nimport (\n\t" + strings.Join(imports, "\n\t") + "\n)\n\n" + body.String()

	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "README.go", src, 0)
	if err != nil {
		t.Fatalf("the README's Go does not parse: %v\n%s", err, src)
	}
	// The packages' export data, as the go command builds them (from its cache).
	var paths []string
	for _, imp := range imports {
		paths = append(paths, strings.Trim(imp, `"`))
	}
	out, err := exec.Command("go", append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}"}, paths...)...).Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "="); ok && file != "" {
			exports[path] = file
		}
	}
	lookup := func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}
	var errs []string
	conf := types.Config{
		Importer: importer.ForCompiler(fset, "gc", lookup),
		Error: func(err error) {
			if te, ok := err.(types.Error); ok && strings.Contains(te.Msg, "declared and not used") {
				return
			}
			errs = append(errs, err.Error())
		},
	}
	_, _ = conf.Check("readme", fset, []*ast.File{f}, nil)
	for _, e := range errs {
		t.Error(e)
	}
	if t.Failed() {
		t.Logf("the snippets as checked:\n%s", src)
	}
}
