package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/laraq/laraq/handlers"
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
	Name     string // program name in messages, "laraq" by default
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	Registry *handlers.Registry
	Getenv   func(string) string
}

// Option configures Main.
type Option func(*App)

// WithRegistry runs `work` (and the demo) with the caller's Go handlers.
func WithRegistry(r *handlers.Registry) Option { return func(a *App) { a.Registry = r } }

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
	if app.Registry == nil {
		app.Registry = handlers.NewRegistry()
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.Run(ctx, app, []string{"--help"})
			}
		}
		app.usage(app.Stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(app.Stderr, "%s: unknown command %q\n", app.Name, args[0])
		app.usage(app.Stderr)
		return 2
	}
	return c.Run(ctx, app, args[1:])
}

func (a *App) usage(w io.Writer) {
	fmt.Fprintf(w, "%s shares Laravel's Redis queues with Go workers.\n\nUsage: %s <command> [flags]\n\nCommands:\n", a.Name, a.Name)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].Summary)
	}
	fmt.Fprintf(w, "\nRun '%s help <command>' for the flags of one command.\n", a.Name)
}

// newFlagSet returns a flag set that prints its usage to the app's stderr.
func (a *App) newFlagSet(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(a.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(a.Stderr, "Usage: %s %s\n\n", a.Name, strings.TrimSpace(usage))
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args and maps the outcome to an exit status: -1 means go on.
func parseFlags(fs *flag.FlagSet, args []string) int {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	return -1
}

// errorf prints one line to stderr and returns exit status 1.
func (a *App) errorf(format string, args ...any) int {
	fmt.Fprintf(a.Stderr, "%s: %s\n", a.Name, fmt.Sprintf(format, args...))
	return 1
}
