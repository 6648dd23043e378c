package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true), where every peer must be present.
func InCI() bool {
	v := os.Getenv("CI")
	return v == "true" || v == "1"
}

// Need stops the test when a peer is missing: a failure in CI, a skip elsewhere.
func Need(t testing.TB, ok bool, format string, args ...any) {
	t.Helper()
	if ok {
		return
	}
	if InCI() {
		t.Fatalf("required peer missing (CI=true): "+format, args...)
	}
	t.Skipf("peer missing: "+format, args...)
}

// RepoRoot returns the directory holding go.mod.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Testdata returns a path under the repository's testdata directory.
func Testdata(elem ...string) string {
	return filepath.Join(append([]string{RepoRoot(), "testdata"}, elem...)...)
}

// RandomName returns n random hex bytes as a string, for prefixes and queue names.
func RandomName(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Prefix returns a fresh connection prefix for one test, shaped like Laravel's
// (`laravel_database_`), so keys of parallel tests never meet.
func Prefix(t testing.TB) string {
	t.Helper()
	return "lq" + RandomName(4) + "_database_"
}
