package laravel

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/laraq/laraq/internal/php"
)

// This file reads .env files the way Laravel 8+ does: with vlucas/phpdotenv 5 and an
// immutable repository. godotenv is not used because it differs on values real
// applications have: it expands `$NAME` without braces (so a password "pa$W0rd" loses
// characters), it only sees names in upper case, it replaces unknown `${NAME}` with ""
// where phpdotenv keeps the text, it ignores the process environment while
// interpolating, and it accepts unquoted values with spaces that make Laravel fail.

// DotenvError is a .env file that phpdotenv refuses ("Failed to parse dotenv file").
type DotenvError struct {
	File   string // path as given
	Line   int    // 1-based line where the entry starts
	Reason string // phpdotenv's wording, e.g. "Encountered unexpected whitespace at [a b]."
}

func (e *DotenvError) Error() string {
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Reason)
}

// dotenvEntry is one `NAME=value` of a .env file, before interpolation.
type dotenvEntry struct {
	line    int
	name    string
	value   string
	defined bool  // false for a line without "=", which phpdotenv treats as "unset NAME"
	vars    []int // byte offsets of "$" that may start a ${NAME} reference, descending
}

// parseDotenv splits content into entries with phpdotenv 5's grammar: lines end at \r\n,
// \n or \r; a value that opens a double quote and does not close it on the same line goes
// on over the following lines; blank lines and lines starting with # are skipped; names
// may be prefixed with `export ` or quoted; values are unquoted (ending at whitespace or
// #), 'single-quoted' (literal) or "double-quoted" (escapes \" \\ \$ \f \n \r \t \v and
// ${NAME} references).
func parseDotenv(file, content string) ([]dotenvEntry, error) {
	lines := splitLines(content)
	var out []dotenvEntry
	multiline := false
	var buf []string
	start := 0
	for i, line := range lines {
		started := looksLikeMultilineStart(line)
		if started {
			multiline = true
		}
		if multiline {
			if len(buf) == 0 {
				start = i
			}
			buf = append(buf, line)
			if looksLikeMultilineStop(line, started) {
				multiline = false
				line = strings.Join(buf, "\n")
				buf = nil
			}
		} else {
			start = i
		}
		if multiline || isCommentOrBlank(line) {
			continue
		}
		e, reason := parseEntry(line)
		if reason != "" {
			return nil, &DotenvError{File: file, Line: start + 1, Reason: reason}
		}
		e.line = start + 1
		out = append(out, e)
	}
	// An unterminated multi-line value is dropped without error, as phpdotenv does.
	return out, nil
}

func splitLines(s string) []string {
	var lines []string
	for {
		i := strings.IndexAny(s, "\r\n")
		if i < 0 {
			return append(lines, s)
		}
		lines = append(lines, s[:i])
		if s[i] == '\r' && i+1 < len(s) && s[i+1] == '\n' {
			i++
		}
		s = s[i+1:]
	}
}

func looksLikeMultilineStart(line string) bool {
	return strings.Contains(line, `="`) && !looksLikeMultilineStop(line, true)
}

// looksLikeMultilineStop counts the double quotes not preceded by a backslash (after
// removing escaped backslashes); the opening line needs two, a later line one.
func looksLikeMultilineStop(line string, started bool) bool {
	if line == `"` {
		return true
	}
	s := strings.ReplaceAll(line, `\\`, "")
	n := 0
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '\\' && s[i+1] == '"' {
			n++
		}
	}
	if started {
		return n > 1
	}
	return n >= 1
}

func isCommentOrBlank(line string) bool {
	t := phpTrim(line)
	return t == "" || t[0] == '#'
}

// phpTrim is PHP's trim() with its default characters.
func phpTrim(s string) string { return strings.Trim(s, " \t\n\r\x00\x0B") }

var dotenvName = regexp.MustCompile(`\A[a-zA-Z0-9_.]+\z`)

func parseEntry(line string) (dotenvEntry, string) {
	var e dotenvEntry
	name, value, hasValue := strings.Cut(line, "=")
	name = phpTrim(name)
	if hasValue {
		value = phpTrim(value)
		if name == "" {
			return e, encountered("an unexpected equals", line)
		}
	}
	if len(name) > 8 && name[:6] == "export" && isCtypeSpace(name[6:7]) {
		name = strings.TrimLeft(name[6:], " \t\n\r\x00\x0B")
	}
	if len(name) >= 3 && (name[0] == '"' && name[len(name)-1] == '"' || name[0] == '\'' && name[len(name)-1] == '\'') {
		name = name[1 : len(name)-1]
	}
	if !dotenvName.MatchString(name) {
		return e, encountered("an invalid name", name)
	}
	e.name = name
	if !hasValue {
		return e, ""
	}
	e.defined = true
	if value == "" {
		return e, ""
	}
	v, vars, reason := parseValue(value)
	if reason != "" {
		return e, encountered(reason, value)
	}
	e.value, e.vars = v, vars
	return e, ""
}

func encountered(cause, subject string) string {
	if i := strings.IndexByte(subject, '\n'); i >= 0 {
		subject = subject[:i]
	}
	return fmt.Sprintf("Encountered %s at [%s].", cause, subject)
}

const (
	stInitial = iota
	stUnquoted
	stSingle
	stDouble
	stEscape
	stWhitespace
	stComment
)

// parseValue runs phpdotenv's value state machine over the lexer's tokens.
func parseValue(value string) (string, []int, string) {
	var b strings.Builder
	var vars []int
	state := stInitial
	add := func(s string, isVar bool) {
		if isVar {
			vars = append(vars, b.Len())
		}
		b.WriteString(s)
	}
	for _, tok := range lexDotenv(value) {
		switch state {
		case stInitial, stUnquoted:
			switch {
			case state == stInitial && tok == "'":
				state = stSingle
			case state == stInitial && tok == `"`:
				state = stDouble
			case tok == "#":
				state = stComment
			case state == stUnquoted && isCtypeSpace(tok):
				state = stWhitespace
			case tok == "$":
				add(tok, true)
				state = stUnquoted
			default:
				add(tok, false)
				state = stUnquoted
			}
		case stSingle:
			if tok == "'" {
				state = stWhitespace
			} else {
				add(tok, false)
			}
		case stDouble:
			switch tok {
			case `"`:
				state = stWhitespace
			case `\`:
				state = stEscape
			case "$":
				add(tok, true)
			default:
				add(tok, false)
			}
		case stEscape:
			switch {
			case tok == `"` || tok == `\` || tok == "$":
				add(tok, false)
			case strings.IndexByte("fnrtv", tok[0]) >= 0:
				add(string("\f\n\r\t\v"[strings.IndexByte("fnrtv", tok[0])])+tok[1:], false)
			default:
				return "", nil, "an unexpected escape sequence"
			}
			state = stDouble
		case stWhitespace:
			if tok == "#" {
				state = stComment
			} else if !isCtypeSpace(tok) {
				return "", nil, "unexpected whitespace"
			}
		case stComment:
		}
	}
	if state == stSingle || state == stDouble || state == stEscape {
		return "", nil, "a missing closing quote"
	}
	sort.Sort(sort.Reverse(sort.IntSlice(vars)))
	return b.String(), vars, ""
}

// lexDotenv splits a value into phpdotenv's tokens: runs of line breaks, runs of other
// whitespace, the single characters \ ' " # $, and runs of anything else (each run at
// most 1000 bytes, as its pattern says).
func lexDotenv(s string) []string {
	var toks []string
	for len(s) > 0 {
		n := 1
		switch c := s[0]; {
		case c == '\r' || c == '\n':
			n = runLen(s, func(c byte) bool { return c == '\r' || c == '\n' })
		case php.IsPCRESpace(c):
			n = runLen(s, func(c byte) bool { return php.IsPCRESpace(c) && c != '\r' && c != '\n' })
		case strings.IndexByte(`\'"#$`, c) >= 0:
		default:
			n = runLen(s, func(c byte) bool { return !php.IsPCRESpace(c) && strings.IndexByte(`\'"#$`, c) < 0 })
		}
		toks = append(toks, s[:n])
		s = s[n:]
	}
	return toks
}

func runLen(s string, in func(byte) bool) int {
	n := 0
	for n < len(s) && n < 1000 && in(s[n]) {
		n++
	}
	return n
}

// isCtypeSpace is PHP's ctype_space: non-empty and only \t \n \v \f \r and spaces.
func isCtypeSpace(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !php.IsPCRESpace(s[i]) {
			return false
		}
	}
	return true
}

// dotenvVar matches a ${NAME} reference at the start of the rest of a value.
var dotenvVar = regexp.MustCompile(`\A\$\{([a-zA-Z0-9_.]+)\}`)

// loadDotenv applies entries to the environment the way Laravel's immutable repository
// does: a name already in the process environment keeps its value (the file's line is
// ignored), references ${NAME} are resolved against the process environment and the lines
// loaded before, and an unknown reference stays as written. It returns the loaded values
// and the line each came from.
func loadDotenv(entries []dotenvEntry, lookup func(string) (string, bool)) (map[string]string, map[string]int) {
	loaded := map[string]string{}
	lines := map[string]int{}
	get := func(name string) (string, bool) {
		if v, ok := lookup(name); ok {
			return v, true
		}
		v, ok := loaded[name]
		return v, ok
	}
	for _, e := range entries {
		if _, external := lookup(e.name); external {
			continue
		}
		if !e.defined {
			delete(loaded, e.name)
			delete(lines, e.name)
			continue
		}
		v := e.value
		for _, i := range e.vars {
			rest := v[i:]
			if m := dotenvVar.FindStringSubmatchIndex(rest); m != nil {
				if val, ok := get(rest[m[2]:m[3]]); ok {
					rest = val + rest[m[1]:]
				}
			}
			v = v[:i] + rest
		}
		loaded[e.name] = v
		lines[e.name] = e.line
	}
	return loaded, lines
}

// envValue is what Laravel's env() helper returns for a variable.
type envValue struct {
	set  bool   // the variable exists (else env() returns its default)
	null bool   // "null" / "(null)": env() returns null
	str  string // the value as PHP would use it as a string (true → "1", false → "")
	bool bool   // "true"/"false" (and parenthesised): env() returns a bool
}

// phpEnv maps a raw variable value as env() does: true/false/empty/null keywords
// (case-insensitive, optionally in parentheses), and one pair of matching surrounding
// quotes removed.
func phpEnv(raw string) envValue {
	switch strings.ToLower(raw) {
	case "true", "(true)":
		return envValue{set: true, bool: true, str: "1"}
	case "false", "(false)":
		return envValue{set: true, bool: true, str: ""}
	case "empty", "(empty)":
		return envValue{set: true}
	case "null", "(null)":
		return envValue{set: true, null: true}
	}
	// /\A(['"])(.*)\1\z/: "." stops at a line break.
	if len(raw) >= 2 && (raw[0] == '"' || raw[0] == '\'') && raw[len(raw)-1] == raw[0] &&
		!strings.Contains(raw[1:len(raw)-1], "\n") {
		raw = raw[1 : len(raw)-1]
	}
	return envValue{set: true, str: raw}
}
