package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}, {"-V"}} {
		out, errOut, rc := opsCLI(t, "", nil, args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if rc != 0 || errOut != "" || len(lines) != 4 || !strings.HasPrefix(lines[0], "laraq ") ||
			!strings.HasPrefix(lines[2], "go: "+runtime.Version()) || !strings.HasPrefix(lines[3], "laravel: 5.8 to 13.x; proved against 8.83, ") {
			t.Errorf("%v: rc %d, stderr %q, stdout:\n%s", args, rc, errOut, out)
		}
	}
	if _, errOut, rc := opsCLI(t, "", nil, "version", "x"); rc != 2 || !strings.Contains(errOut, "takes no arguments") {
		t.Errorf("version x: rc %d %q", rc, errOut)
	}
}

func TestWriteVersion(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.time", Value: "2026-11-27T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		info   *debug.BuildInfo
		first  string
		commit string
	}{
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: modulePath, Version: "v1.4.0"}, Settings: vcs},
			"laraq v1.4.0 (github.com/laraq/laraq)", "commit: 0123abcd (2026-11-27T10:00:00Z), with uncommitted changes"},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "example.com/shop", Version: "v0.3.0"},
			Deps: []*debug.Module{{Path: modulePath, Version: "v1.4.0"}}},
			"laraq v1.4.0 (github.com/laraq/laraq, in example.com/shop v0.3.0)", "commit: unknown (built without version control information)"},
		{&debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: modulePath, Version: "(devel)"}},
			"laraq (devel: built from a source tree) (github.com/laraq/laraq)", "commit: unknown (built without version control information)"},
	} {
		var b bytes.Buffer
		writeVersion(&b, "laraq", tc.info)
		lines := strings.Split(b.String(), "\n")
		if lines[0] != tc.first || lines[1] != tc.commit || !strings.HasPrefix(lines[2], "go: go1.26.0 ") {
			t.Errorf("got:\n%s\nwant first %q, commit %q", b.String(), tc.first, tc.commit)
		}
	}
}

// TestWorkHelpStartsWithEverydayFlags: `laraq work --help` lists queue:work's everyday
// flags first, in --flag form, then the rest under headings.
func TestWorkHelpStartsWithEverydayFlags(t *testing.T) {
	out, _, rc := opsCLI(t, "", nil, "work", "--help")
	if rc != 0 {
		t.Fatalf("rc %d", rc)
	}
	var flags []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  --") || l == "  CONNECTION" {
			f, _, _ := strings.Cut(strings.TrimSpace(l), " ")
			flags = append(flags, f)
		}
	}
	want := []string{"CONNECTION", "--queue", "--concurrency", "--tries", "--timeout", "--memory", "--sleep", "--stop-when-empty"}
	if len(flags) < len(want) || strings.Join(flags[:len(want)], " ") != strings.Join(want, " ") {
		t.Errorf("the help starts with %q, want %q", flags[:min(len(flags), len(want))], want)
	}
	headings := []string{"Everyday flags", "Redis:", "Forwarding to an HTTP service:", "Horizon:", "Metrics, logs and tracing:"}
	at := -1
	for _, h := range headings {
		i := strings.Index(out, h)
		if i <= at {
			t.Errorf("heading %q missing or out of order", h)
		}
		at = i
	}
	if strings.Contains(out, "\n  -tries") || strings.Contains(out, "--vv") || strings.Contains(out, "Other flags:") {
		t.Errorf("single-dash, duplicate or unsorted flags:\n%s", out)
	}
}

// TestHandedBackJobLine: a job given back to the PHP workers prints queue:work's line,
// with HANDED BACK, also under --once; in JSON its job_status is handed_back.
func TestHandedBackJobLine(t *testing.T) {
	r := testenv.RedisServer(t)
	prefix := testenv.Prefix(t)
	d, err := testDispatcher(r.Client(t, 0), prefix, "back")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Dispatch(context.Background(), oomJob{N: 1}); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"artisan", "json"} {
		out, errOut, rc := runWorkCLI(t, laraq.NewJobs(), "--redis", "redis://"+r.Addr+"/0", "--prefix", prefix, "--queue", "back", "--once",
			"--no-cache", "--database", "null", "--unhandled", "hand-back", "--log-format", format)
		want := `App\Jobs\OOMJob`
		switch format {
		case "artisan":
			if !regexp.MustCompile(`^  \d{4}-\d\d-\d\d \d\d:\d\d:\d\d App\\Jobs\\OOMJob \.+ HANDED BACK\n$`).MatchString(out) {
				t.Errorf("rc %d, stdout %q\n%s", rc, out, errOut)
			}
		case "json":
			if !strings.Contains(out, `"job_status":"handed_back"`) || !strings.Contains(out, `"job":"App\\Jobs\\OOMJob"`) {
				t.Errorf("rc %d, stdout %q, want %s handed back", rc, out, want)
			}
		}
	}
}

// TestGuessedReleaseUnderRoot: with --laravel-root given but no framework to read there,
// the warning says what could not be read, and asks for no --laravel-version.
func TestGuessedReleaseUnderRoot(t *testing.T) {
	r := testenv.RedisServer(t)
	root := t.TempDir()
	for name, body := range map[string]string{"artisan": "#!/usr/bin/env php\n", ".env": "APP_NAME=shop\nCACHE_STORE=array\n", "config/.keep": ""} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, errOut, rc := runWorkCLI(t, nil, "--laravel-root", root, "--redis", "redis://"+r.Addr+"/0", "--stop-when-empty", "--no-cache",
		"--database", "null", "--queue", "none"+testenv.RandomName(3))
	if rc != 0 || !strings.Contains(errOut, "the Laravel release could not be read under "+root+": there is no vendor/laravel/framework") ||
		strings.Contains(errOut, "--laravel-version") {
		t.Errorf("rc %d:\n%s", rc, errOut)
	}
}
