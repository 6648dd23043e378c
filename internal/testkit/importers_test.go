package testkit_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// TestNoLibraryPackageImportsTestkit: testkit is for tests; a library package that
// imported it would link the test helpers (and package testing) into every program
// built on laraq.
func TestNoLibraryPackageImportsTestkit(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...")
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const self = "github.com/laraq/laraq/internal/testkit"
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 10 {
		t.Fatalf("go list named %d packages, so this check proves nothing:\n%s", len(lines), out)
	}
	for _, line := range lines {
		pkg, imports, _ := strings.Cut(line, " ")
		if pkg != self && strings.Contains(" "+imports+" ", " "+self+" ") {
			t.Errorf("%s imports %s outside its tests", pkg, self)
		}
	}
}
