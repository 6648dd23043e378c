package cli

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// TestDecodeEncryptedCommandWithKey: the encrypted command each release captured is shown as
// stored without a key, and decrypted with --app-key or the APP_KEY of --env-file; a
// wrong key is Laravel's "The MAC is invalid." and the key shows nowhere.
func TestDecodeEncryptedCommandWithKey(t *testing.T) {
	files, _ := filepath.Glob(testenv.Testdata("laravel-payloads", "encrypted", "L*-encrypted.json"))
	want := 0
	for _, s := range testenv.CaptureSpecs(t) {
		if s.Shape == "encrypted" {
			want = len(s.Majors)
		}
	}
	if want == 0 || len(files) != want {
		t.Fatalf("want the %d captured encrypted payloads of capture/shapes.json, have %v", want, files)
	}
	envFile := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(envFile, []byte("APP_NAME=shop\nAPP_KEY="+testenv.CaptureAppKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wrong := "base64:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("w", 32)))
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			out, errOut, rc := runCLI(t, nil, "decode", f)
			if rc != 0 || strings.Contains(out, `"@class"`) || !strings.Contains(errOut, "encrypted") {
				t.Errorf("without a key: rc %d, stderr %q, output shows the command: %v", rc, errOut, strings.Contains(out, `"@class"`))
			}
			for _, args := range [][]string{{"--app-key", testenv.CaptureAppKey}, {"--env-file", envFile}} {
				out, errOut, rc := runCLI(t, nil, append(append([]string{"decode"}, args...), f)...)
				if rc != 0 || !strings.Contains(out, `"@class": "App\\Jobs\\Matrix\\SecretJob"`) || !strings.Contains(out, `"secret": "s3cr3t"`) {
					t.Errorf("decode %v: rc %d, stderr %q, output:\n%s", args, rc, errOut, out)
				}
			}
			out, errOut, rc = runCLI(t, nil, "decode", "--app-key", wrong, f)
			if rc == 0 || !strings.Contains(errOut, "The MAC is invalid.") || strings.Contains(errOut+out, wrong[7:]) || strings.Contains(errOut+out, testenv.CaptureAppKey[7:]) {
				t.Errorf("wrong key: rc %d, stderr %q", rc, errOut)
			}
		})
	}
}
