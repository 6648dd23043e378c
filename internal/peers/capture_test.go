package peers

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

var capture = flag.Bool("capture", false, "rewrite the captured fixtures of testdata/laravel-payloads (capture/shapes.json) from the real releases")

// TestCapturedPayloadsDoNotDrift re-captures every capture/shapes.json shape from each release
// and compares it with the committed fixture, byte for byte after NormalizeCapture (the
// encrypted command's random IV; 8.83's random job id and uuid). A difference means the
// release, the job classes or the capture requests changed: re-capture with -capture and
// review the diff. With -capture the files are rewritten instead.
func TestCapturedPayloadsDoNotDrift(t *testing.T) {
	srv := testenv.RedisServer(t)
	dir := testenv.Testdata("laravel-payloads")
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		for _, c := range testenv.CapturePayloads(t, srv, major) {
			file := filepath.Join(dir, c.File)
			if *capture {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, c.Bytes, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			committed, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: %v (capture it with -capture)", c.ID, err)
				continue
			}
			got, want := testenv.NormalizeCapture(major, c.Bytes), testenv.NormalizeCapture(major, committed)
			if !bytes.Equal(got, want) {
				t.Errorf("%s drifted from %s:\n now: %s\n was: %s", c.ID, c.File, got, want)
			}
		}
	})
}
