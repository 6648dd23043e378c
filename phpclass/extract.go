package phpclass

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The PHP side of Extract: extract.php loads the autoloader and prints the facts that
// extract_facts.php reads through PHP's reflection (see their headers). php runs them as
// one script from stdin, the facts' declarations first. They are put together when
// Extract runs, so that a program that only reads manifests (a worker checking its
// types) links neither.
var (
	//go:embed extract.php
	extractMain []byte
	//go:embed extract_facts.php
	extractFacts []byte
)

func extractScript() []byte {
	return append(append(append([]byte(nil), extractFacts...), '\n'), bytes.TrimPrefix(extractMain, []byte("<?php"))...)
}

// Options say which classes Extract reads and with what.
type Options struct {
	// PHP is the php binary (default: php from PATH).
	PHP string
	// Root is the application's directory: with no Classes, the ShouldQueue classes under
	// its composer.json autoload.psr-4 roots are read, and file names are given relative
	// to it. Autoload defaults to Root/vendor/autoload.php.
	Root string
	// Autoload is the PHP file that makes the classes loadable: vendor/autoload.php, or
	// any file requiring or registering them (a non-composer setup, tests).
	Autoload string
	// Classes are the classes to read; none: every concrete ShouldQueue class under
	// Root's PSR-4 roots (without a composer.json there: every one the Autoload file
	// declared itself).
	Classes []string
	// Env is php's environment (default: this process's).
	Env []string
}

// ClassError is a class (or file) PHP could not read.
type ClassError struct {
	Class string
	File  string
	Err   string
}

func (e *ClassError) Error() string {
	where := e.Class
	if e.File != "" {
		where += " (" + e.File + ")"
	}
	return "phpclass: " + where + ": " + e.Err
}

// FatalError is PHP stopping with a fatal error (a parse error, a class that cannot be
// declared) while it loaded the autoloader or a class.
type FatalError struct {
	Message string
	File    string
	Line    int
	Loading string // what was being loaded: the autoload file, a class (and its file)
}

func (e *FatalError) Error() string {
	msg := "phpclass: PHP fatal error"
	if e.Loading != "" {
		msg += " while loading " + e.Loading
	}
	msg += ": " + e.Message
	if e.File != "" {
		msg += fmt.Sprintf(" (%s:%d)", e.File, e.Line)
	}
	return msg
}

// extractResult is what extract.php writes.
type extractResult struct {
	Manifest
	Errors []struct {
		Class string `json:"class"`
		File  string `json:"file"`
		Error string `json:"error"`
	} `json:"errors"`
	Fatal *struct {
		Message string `json:"message"`
		File    string `json:"file"`
		Line    int    `json:"line"`
		Loading string `json:"loading"`
		Name    string `json:"name"`
	} `json:"fatal"`
	Error string `json:"error"`
}

// maxOutput bounds what is kept of php's stdout and stderr for error messages.
const maxOutput = 16 << 10

// Extract asks PHP for the facts of the classes: it runs php with the autoloader and
// reads the classes through reflection. A class that does not load, a fatal error in
// the autoloader or a class, and no php at all are errors naming what failed
// (*ClassError, *FatalError; several ClassErrors are joined).
func Extract(ctx context.Context, o Options) (*Manifest, error) {
	php := o.PHP
	if php == "" {
		php = "php"
	}
	bin, err := exec.LookPath(php)
	if err != nil {
		return nil, fmt.Errorf("phpclass: %s not found (install php-cli, or name the binary): %w", php, err)
	}
	root := o.Root
	autoload := o.Autoload
	if autoload == "" {
		if root == "" {
			return nil, errors.New("phpclass: give the application's directory or an autoload file")
		}
		autoload = filepath.Join(root, "vendor", "autoload.php")
	}
	if root != "" {
		if root, err = filepath.Abs(root); err != nil {
			return nil, fmt.Errorf("phpclass: %w", err)
		}
	}
	if autoload, err = filepath.Abs(autoload); err != nil {
		return nil, fmt.Errorf("phpclass: %w", err)
	}
	if _, err := os.Stat(autoload); err != nil {
		return nil, fmt.Errorf("phpclass: the autoload file: %w", err)
	}
	req, err := json.Marshal(map[string]any{"autoload": autoload, "root": root, "classes": o.Classes})
	if err != nil {
		return nil, err
	}

	out, err := runPHP(ctx, bin, req, o.Env)
	if err != nil {
		return nil, err
	}
	var res extractResult
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, fmt.Errorf("phpclass: php wrote what is not the facts of classes (%v): %.200q", err, out)
	}
	switch {
	case res.Fatal != nil:
		f := res.Fatal
		loading := f.Name
		if f.Loading == "autoload" {
			loading = "the autoload file " + f.Name
		}
		return nil, &FatalError{Message: f.Message, File: f.File, Line: f.Line, Loading: loading}
	case res.Error != "":
		return nil, errors.New("phpclass: " + res.Error)
	case len(res.Errors) > 0:
		errs := make([]error, len(res.Errors))
		for i, e := range res.Errors {
			errs[i] = &ClassError{Class: e.Class, File: e.File, Err: e.Error}
		}
		return nil, errors.Join(errs...)
	}
	m := res.Manifest
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%w (in what php wrote)", err)
	}
	return &m, nil
}

// runPHP runs the extraction script (given on php's stdin) and returns what it wrote to
// file descriptor 3: the application's own output while loading goes to stdout and is
// only shown when php fails.
func runPHP(ctx context.Context, bin string, req []byte, env []string) ([]byte, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("phpclass: %w", err)
	}
	defer r.Close()
	cmd := exec.CommandContext(ctx, bin, "-d", "display_errors=stderr", "-d", "log_errors=0", "--", string(req))
	cmd.Stdin = bytes.NewReader(extractScript())
	stdout, stderr := &capped{n: maxOutput}, &capped{n: maxOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.ExtraFiles = []*os.File{w}
	if env != nil {
		cmd.Env = env
	}
	if err := cmd.Start(); err != nil {
		w.Close()
		return nil, fmt.Errorf("phpclass: starting %s: %w", bin, err)
	}
	w.Close()
	out, readErr := io.ReadAll(r)
	waitErr := cmd.Wait()
	if len(bytes.TrimSpace(out)) == 0 || readErr != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = strings.TrimSpace(stdout.String())
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("phpclass: php: %w", ctx.Err())
		}
		return nil, fmt.Errorf("phpclass: php wrote no facts (%v): %s", waitErr, msg)
	}
	return out, nil
}

// capped keeps the first n bytes written to it.
type capped struct {
	bytes.Buffer
	n int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.n - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
