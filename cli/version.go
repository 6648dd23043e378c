package cli

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/laraq/laraq"
)

func init() {
	register(&Command{Name: "version", Summary: "print laraq's version, commit, Go version and the Laravel releases it knows", Run: runVersion})
}

// modulePath is laraq's module, found in the build information whether laraq is the
// program (cmd/laraq) or a dependency of a team's own binary.
const modulePath = "github.com/laraq/laraq"

// provedReleases are the Laravel releases the test suite runs against (README,
// Compatibility): Debian's 8.83 and the unpatched trees of the shared peers.
var provedReleases = []string{"8.83", "10.50.3", "11.56.0", "12.67.0", "13.4.0", "13.26.1"}

func runVersion(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("version", "version\n\nPrints laraq's module version, the commit it was built from, the Go version and the Laravel releases it knows.")
	if rc := fs.Parse(args); rc >= 0 {
		return rc
	}
	if fs.NArg() > 0 {
		return fs.Fail("takes no arguments")
	}
	info, _ := debug.ReadBuildInfo()
	writeVersion(app.Stdout, app.Name, info)
	return 0
}

// writeVersion prints what `laraq version` says, from the binary's build information.
func writeVersion(w io.Writer, name string, info *debug.BuildInfo) {
	version, path := "(unknown)", modulePath
	var revision, when string
	modified := false
	if info != nil {
		switch {
		case info.Main.Path == modulePath:
			version = info.Main.Version
		default:
			for _, d := range info.Deps {
				if d.Path == modulePath {
					version = d.Version
					if d.Replace != nil {
						version += " (replaced by " + d.Replace.Path + " " + d.Replace.Version + ")"
					}
				}
			}
			if info.Main.Path != "" {
				path = modulePath + ", in " + info.Main.Path + " " + info.Main.Version
			}
		}
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				revision = s.Value
			case "vcs.time":
				when = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if version == "" || version == "(devel)" {
		version = "(devel: built from a source tree)"
	}
	fmt.Fprintf(w, "%s %s (%s)\n", name, version, path)
	switch {
	case revision == "":
		fmt.Fprintln(w, "commit: unknown (built without version control information)")
	default:
		c := "commit: " + revision
		if when != "" {
			c += " (" + when + ")"
		}
		if modified {
			c += ", with uncommitted changes"
		}
		fmt.Fprintln(w, c)
	}
	goVersion := runtime.Version()
	if info != nil && info.GoVersion != "" {
		goVersion = info.GoVersion
	}
	fmt.Fprintf(w, "go: %s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(w, "laravel: 5.8 to %d.x; proved against %s; an unnamed release is taken for %s\n",
		laraq.LatestRelease.Major, strings.Join(provedReleases, ", "), laraq.LatestRelease)
}
