package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/laraq/laraq"
	"github.com/redis/go-redis/v9"
)

// Command is one `laraq` subcommand.
type Command struct {
	Name    string
	Summary string // one line for `laraq help`
	// Run executes the command with the arguments after its name and returns the exit status.
	Run func(ctx context.Context, app *App, args []string) int
}

var commands = map[string]*Command{}

// register adds a subcommand; each lives in its own file.
func register(c *Command) {
	if _, dup := commands[c.Name]; dup {
		panic("cli: duplicate command " + c.Name)
	}
	commands[c.Name] = c
}

// App is what a subcommand runs with: standard streams, the handlers a user's binary
// registered, and the process environment.
type App struct {
	Name   string // program name in messages, "laraq" by default
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Jobs   *laraq.Jobs
	Getenv func(string) string

	extra []*Command // WithCommand
}

// Option configures Main.
type Option func(*App)

// WithJobs runs `work` with the caller's Go handlers.
func WithJobs(jobs *laraq.Jobs) Option { return func(a *App) { a.Jobs = jobs } }

// WithCommand adds a subcommand, such as the demo cmd/laraq adds.
func WithCommand(c *Command) Option { return func(a *App) { a.extra = append(a.extra, c) } }

// WithIO replaces the standard streams (tests).
func WithIO(stdin io.Reader, stdout, stderr io.Writer) Option {
	return func(a *App) { a.Stdin, a.Stdout, a.Stderr = stdin, stdout, stderr }
}

// WithGetenv replaces os.Getenv (tests).
func WithGetenv(f func(string) string) Option { return func(a *App) { a.Getenv = f } }

// WithName sets the program name used in usage messages.
func WithName(name string) Option { return func(a *App) { a.Name = name } }

// Main runs the command line args (without the program name) and returns the exit status.
// Cancelling ctx asks a running command to stop gracefully.
func Main(ctx context.Context, args []string, opts ...Option) int {
	app := &App{Name: "laraq", Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	for _, o := range opts {
		o(app)
	}
	if app.Jobs == nil {
		app.Jobs = laraq.NewJobs()
	}
	// go-redis writes its own lines (dial failures, pool notices, Sentinel news) with the
	// standard log package; they go to this program's stderr as log records instead
	// (`work` then switches them to its --log-format). The logger is go-redis' global:
	// the CLI, which owns the process, may set it; the library never does.
	redis.SetLogger(newRedisLog(slog.New(slog.NewTextHandler(app.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	if len(args) > 0 && (args[0] == "--version" || args[0] == "-version" || args[0] == "-V") {
		args = append([]string{"version"}, args[1:]...)
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, ok := app.command(args[1]); ok {
				return c.Run(ctx, app, []string{"--help"})
			}
			fmt.Fprintf(app.Stderr, "%s: unknown command %q\nRun '%s help' for the list of commands.\n", app.Name, args[1], app.Name)
			return 2
		}
		app.usage(app.Stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := app.command(args[0])
	if !ok {
		fmt.Fprintf(app.Stderr, "%s: unknown command %q\nRun '%s help' for the list of commands.\n", app.Name, args[0], app.Name)
		return 2
	}
	return c.Run(ctx, app, args[1:])
}

// command finds a subcommand, the built-in ones first.
func (a *App) command(name string) (*Command, bool) {
	if c, ok := commands[name]; ok {
		return c, true
	}
	for _, c := range a.extra {
		if c.Name == name {
			return c, true
		}
	}
	return nil, false
}

func (a *App) usage(w io.Writer) {
	fmt.Fprintf(w, "%s shares Laravel's Redis queues with Go workers.\n\nUsage: %s <command> [flags]\n\nCommands:\n", a.Name, a.Name)
	all := map[string]*Command{}
	for n, c := range commands {
		all[n] = c
	}
	for _, c := range a.extra {
		all[c.Name] = c
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, all[n].Summary)
	}
	fmt.Fprintf(w, "\nRun '%s help <command>' for the flags of one command, '%s --version' for the version.\n", a.Name, a.Name)
}

// FlagSet is a subcommand's flags: --help prints the whole usage on stdout; a mistake is
// one line on stderr and a pointer to the help, as artisan does.
type FlagSet struct {
	*flag.FlagSet
	app   *App
	usage string
	// sections, when set, print the flags under headings (the everyday ones first) and
	// the usage text after them, save its first paragraph.
	sections []helpSection
}

// NewFlagSet returns the flags of subcommand name, whose usage text is usage (its first
// line the synopsis).
func (a *App) NewFlagSet(name, usage string) *FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &FlagSet{FlagSet: fs, app: a, usage: usage}
}

// PrintUsage writes the synopsis, the description and every flag to w.
func (f *FlagSet) PrintUsage(w io.Writer) {
	if f.sections != nil {
		synopsis, rest, _ := strings.Cut(strings.TrimSpace(f.usage), "\n\n")
		summary, details, _ := strings.Cut(rest, "\n\n")
		fmt.Fprintf(w, "Usage: %s %s\n\n%s\n\n", f.app.Name, synopsis, summary)
		printSections(w, f.FlagSet, f.sections)
		if details = strings.TrimSpace(details); details != "" {
			fmt.Fprintf(w, "%s\n", details)
		}
		return
	}
	fmt.Fprintf(w, "Usage: %s %s\n\n", f.app.Name, strings.TrimSpace(f.usage))
	f.SetOutput(w)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
}

// Fail prints a usage mistake as one line and the way to the help, and returns exit
// status 2.
func (f *FlagSet) Fail(format string, args ...any) int {
	fmt.Fprintf(f.app.Stderr, "%s %s: %s\nRun '%s help %s' for usage.\n", f.app.Name, f.Name(), fmt.Sprintf(format, args...), f.app.Name, f.Name())
	return 2
}

// Parse parses args and maps the outcome to an exit status: -1 means go on.
func (f *FlagSet) Parse(args []string) int {
	if err := f.FlagSet.Parse(args); err != nil {
		if err == flag.ErrHelp {
			f.PrintUsage(f.app.Stdout)
			return 0
		}
		return f.Fail("%v", err)
	}
	return -1
}

// errorf prints one line to stderr and returns exit status 1.
func (a *App) errorf(format string, args ...any) int {
	fmt.Fprintf(a.Stderr, "%s: %s\n", a.Name, fmt.Sprintf(format, args...))
	return 1
}
