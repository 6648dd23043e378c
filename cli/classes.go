package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/laraq/laraq/phpclass"
)

func init() {
	register(&Command{Name: "classes", Summary: "read the job classes' facts with PHP's reflection into a manifest", Run: runClasses})
	register(&Command{Name: "gen", Summary: "write Go types for PHP job classes", Run: runGen})
}

const classesUsage = `classes [--laravel-root DIR] [--autoload FILE] [-o FILE] [CLASS...]

Asks PHP for the facts of the application's job classes and writes them as a manifest
(JSON): each class's properties in the order serialize() writes them, with visibility,
declared type, default, readonly and promoted, the trait each comes from; its traits,
interfaces (ShouldQueue, ShouldBeUnique, ShouldBeEncrypted, ...), 13.x attributes, the
methods that decide how Laravel queues it (tries(), backoff(), uniqueId(), ...) with
their source; and the Laravel release. PHP reads the classes through the application's
own autoloader (DIR/vendor/autoload.php, or --autoload FILE: any PHP file that makes
the classes loadable), so the facts are PHP's, not a parse of PHP in Go.

With no CLASS named, every concrete ShouldQueue class (jobs, queued listeners,
mailables, notifications) under the PSR-4 roots of DIR/composer.json is read (without
one, every such class the --autoload file declared).

'laraq gen' writes Go types from the manifest; 'laraq work', 'dispatch' and 'decode'
take it with --classes FILE (or LARAQ_CLASSES), on a host with neither PHP nor the
application's code.`

const genUsage = `gen [--classes FILE | --laravel-root DIR [--autoload FILE]] [--package NAME] [-o FILE] [CLASS...]

Writes Go source for PHP job classes: per class a struct whose fields carry its
properties in serialize() order, with php tags naming each property, its visibility and
its default (default=), Go types for its declared types (phpser.Map for arrays,
phpser.ModelIdentifier for models, time.Time for dates, a string type per enum),
laraq.Queueable for the Queueable traits, PHPClass, PHPSerializesModels, the methods
laraq reads for ShouldBeUnique and ShouldBeEncrypted, PHPAttributes for 13.x queue
attributes, and, for each PHP method Go must compute itself (tries(), backoff(),
uniqueId(), displayName(), ...), the PHP source in a comment above a Go method that
panics until it is written. The methods to write are listed on stderr.

The facts come from a manifest ('laraq classes'), or from the application itself
(--laravel-root, --autoload), read with PHP as 'laraq classes' does. With no CLASS
named, every class of the manifest is written.`

// classesFlag is the --classes flag of work, dispatch and decode.
type classesFlag struct{ path string }

func addClassesFlag(fs *FlagSet) *classesFlag {
	c := &classesFlag{}
	fs.StringVar(&c.path, "classes", "", "the job classes' facts, a manifest `FILE` 'laraq classes' wrote (default: LARAQ_CLASSES)")
	return c
}

// load reads and checks the manifest named by --classes or LARAQ_CLASSES; nil when
// neither names one.
func (c *classesFlag) load(app *App) (*phpclass.Manifest, error) {
	path, from := c.path, "--classes"
	if path == "" {
		path, from = app.Getenv("LARAQ_CLASSES"), "LARAQ_CLASSES"
	}
	if path == "" {
		return nil, nil
	}
	m, err := phpclass.Load(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return m, nil
}

// extractFlags are what classes and gen ask PHP with.
type extractFlags struct {
	root, autoload, php string
}

func addExtractFlags(fs *FlagSet) *extractFlags {
	e := &extractFlags{}
	fs.StringVar(&e.root, "laravel-root", "", "the Laravel application `DIR`: its vendor/autoload.php, and the PSR-4 roots of its composer.json")
	fs.StringVar(&e.autoload, "autoload", "", "a PHP `FILE` that makes the classes loadable (default: DIR/vendor/autoload.php)")
	fs.StringVar(&e.php, "php", "php", "the php `binary`")
	return e
}

func (e *extractFlags) extract(ctx context.Context, classes []string) (*phpclass.Manifest, error) {
	return phpclass.Extract(ctx, phpclass.Options{PHP: e.php, Root: e.root, Autoload: e.autoload, Classes: classes})
}

// printErrors prints each of a joined error's errors on its own line.
func (a *App) printErrors(err error) int {
	var joined interface{ Unwrap() []error }
	if errors.As(err, &joined) {
		for _, e := range joined.Unwrap() {
			fmt.Fprintf(a.Stderr, "%s: %v\n", a.Name, e)
		}
		return 1
	}
	return a.errorf("%v", err)
}

func runClasses(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("classes", classesUsage)
	ef := addExtractFlags(fs)
	out := fs.String("o", "", "write the manifest to `FILE` (default: stdout)")
	classes, rc := parseInterleaved(fs, args)
	if rc >= 0 {
		return rc
	}
	if ef.root == "" && ef.autoload == "" {
		return fs.Fail("give the application (--laravel-root DIR) or an autoload file (--autoload FILE)")
	}
	m, err := ef.extract(ctx, classes)
	if err != nil {
		return app.printErrors(err)
	}
	if err := writeOut(app, *out, m.Write); err != nil {
		return app.errorf("%v", err)
	}
	fmt.Fprintf(app.Stderr, "%s: %d classes (Laravel %s, PHP %s)\n", app.Name, len(m.Classes), orUnknown(m.Laravel), m.PHP)
	for _, c := range m.Classes {
		if !c.OrderVerified {
			fmt.Fprintf(app.Stderr, "%s: warning: %s: the order of its properties is PHP's rule, not read back from serialize(): %s\n", app.Name, c.Name, c.OrderNote)
		}
	}
	return 0
}

func runGen(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("gen", genUsage)
	manifest := fs.String("classes", "", "the manifest `FILE` 'laraq classes' wrote (default: LARAQ_CLASSES, else ask PHP)")
	ef := addExtractFlags(fs)
	pkg := fs.String("package", "jobs", "the Go package `name`")
	out := fs.String("o", "", "write the Go source to `FILE` (default: stdout)")
	classes, rc := parseInterleaved(fs, args)
	if rc >= 0 {
		return rc
	}
	if *manifest != "" && (ef.root != "" || ef.autoload != "") {
		return fs.Fail("give the facts as --classes FILE or as the application (--laravel-root, --autoload), not both")
	}
	var m *phpclass.Manifest
	var err error
	switch {
	case ef.root != "" || ef.autoload != "":
		m, err = ef.extract(ctx, classes)
	default:
		if m, err = (&classesFlag{path: *manifest}).load(app); err == nil && m == nil {
			return fs.Fail("give the facts: --classes FILE (or LARAQ_CLASSES), or the application with --laravel-root DIR or --autoload FILE")
		}
	}
	if err != nil {
		return app.printErrors(err)
	}
	g, err := phpclass.Generate(m, phpclass.GenOptions{Package: *pkg, Classes: classes})
	if err != nil {
		return app.errorf("%v", err)
	}
	if err := writeOut(app, *out, func(w io.Writer) error { _, err := w.Write(g.Source); return err }); err != nil {
		return app.errorf("%v", err)
	}
	if len(g.Todo) > 0 {
		fmt.Fprintf(app.Stderr, "%s: %d PHP methods to write in Go (their Go methods panic until then): %s\n", app.Name, len(g.Todo), strings.Join(g.Todo, ", "))
	}
	return 0
}

// writeOut writes with write to the file named (stdout when ""), replacing it only once
// everything is written.
func writeOut(app *App, path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(app.Stdout)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".laraq-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
