package laraq_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// TestHandlerOnlyBinaryLinksNoSQLDriver builds testdata/handleronly, a worker with typed
// handlers and no failed-job store, and reads its module list: a program that did not ask
// for a SQL store must not carry the SQLite, MySQL or PostgreSQL drivers, nor miniredis,
// OpenTelemetry (package otel is imported only by who traces) or the recorded Laravel
// payloads of the demo.
func TestHandlerOnlyBinaryLinksNoSQLDriver(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "handleronly")
	build := exec.Command("go", "build", "-o", bin, "./testdata/handleronly")
	build.Dir = testenv.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	mods := string(out)
	if !strings.Contains(mods, "github.com/redis/go-redis/v9") {
		t.Fatalf("module list lacks go-redis, so it is not the list it should be:\n%s", mods)
	}
	for _, banned := range []string{"modernc.org/sqlite", "github.com/go-sql-driver/mysql", "github.com/jackc/pgx",
		"github.com/alicebob/miniredis", "github.com/prometheus/client_golang", "go.opentelemetry.io"} {
		if strings.Contains(mods, banned) {
			t.Errorf("a handler-only binary links %s:\n%s", banned, mods)
		}
	}
	// The recorded payloads are a package of this module: look for them in the binary's
	// symbols rather than in the module list.
	syms, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	if strings.Contains(string(syms), "laravel-payloads") {
		t.Error("a handler-only binary links the recorded Laravel payloads")
	}
	// WorkerConfig.Classes and WithClasses bring package phpclass in, but a program that
	// never asks PHP for the facts must not carry PHP's extraction script nor os/exec.
	if !strings.Contains(string(syms), "phpclass.") {
		t.Fatal("the symbols lack package phpclass, so this check proves nothing")
	}
	if strings.Contains(string(syms), "os/exec.") {
		t.Error("a handler-only binary links os/exec")
	}
	if b, err := os.ReadFile(bin); err != nil || bytes.Contains(b, []byte("function laraq_describe")) {
		t.Errorf("a handler-only binary links PHP's class extraction script (%v)", err)
	}
}
