package phpclass_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestManifestReaderLinksNoPHP: a program that only reads a manifest and checks types
// (a worker host without PHP) links neither the extraction script nor os/exec.
func TestManifestReaderLinksNoPHP(t *testing.T) {
	dir := goPackageDir(t)
	src := `package main

import (
	"os"
	"reflect"

	"github.com/laraq/laraq/phpclass"
)

func main() {
	m, err := phpclass.Load(os.Args[1])
	if err != nil {
		panic(err)
	}
	_ = phpclass.CheckTypes(m, map[string]reflect.Type{})
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "reader")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("function laraq_describe")) {
		t.Error("a manifest reader links the PHP extraction script")
	}
	syms, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(syms), "phpclass.CheckTypes") {
		t.Fatal("the symbol list lacks phpclass.CheckTypes, so it is not the list it should be")
	}
	if strings.Contains(string(syms), "os/exec.") {
		t.Error("a manifest reader links os/exec")
	}
}
