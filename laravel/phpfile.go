package laravel

import (
	"fmt"
	"strconv"
	"strings"
)

// This file reads a Laravel config file (config/*.php, and bootstrap/cache/config.php)
// as data: the array its top-level `return` gives, with every value that is not itself
// an array literal kept as the tokens of its expression, for phpeval.go to evaluate on
// demand. It is a tokenizer and a bracket matcher, not a PHP parser: what it cannot
// place (a `return` of anything but an array literal, a spread, a computed key) makes the
// affected part unknown, never a wrong value.

// Limits on outside bytes: config files are small; anything far larger is not one.
const (
	maxPHPFileSize = 4 << 20 // bytes
	maxPHPDepth    = 64      // nesting of brackets and parentheses
)

type tokKind uint8

const (
	tokPunct    tokKind = iota + 1 // ( ) [ ] { } , ; . => :: and every other operator
	tokName                        // identifiers and namespaced names: env, Str, \Illuminate\Support\Str, true
	tokVar                         // $name
	tokString                      // a quoted string whose value is known (val)
	tokTemplate                    // a string with interpolation, a heredoc: value unknown
	tokInt                         // a decimal integer (val holds its digits)
	tokNumber                      // any other number literal: value not evaluated
)

type phpToken struct {
	kind tokKind
	text string // the source text (for messages)
	val  string // tokString: the decoded value; tokInt: the digits
	line int
}

func (t phpToken) is(kind tokKind, text string) bool { return t.kind == kind && t.text == text }

// multi-character operators, longest first, so that "=>" or "::" is one token.
var phpOperators = []string{
	"<<=", ">>=", "**=", "...", "<=>", "===", "!==", "??=", "?->",
	"=>", "::", "->", "??", "==", "!=", "<>", "<=", ">=", "&&", "||", "++", "--",
	"+=", "-=", "*=", "/=", ".=", "%=", "&=", "|=", "^=", "<<", ">>", "**",
}

// tokenizePHP splits PHP source into tokens, dropping whitespace, comments and inline
// HTML outside <?php … ?>. An unterminated string or comment is an error with its line.
func tokenizePHP(src string) ([]phpToken, error) {
	if len(src) > maxPHPFileSize {
		return nil, fmt.Errorf("%d bytes: larger than a config file can be (%d)", len(src), maxPHPFileSize)
	}
	var toks []phpToken
	line := 1
	i := 0
	inCode := false
	for i < len(src) {
		if !inCode {
			j := strings.Index(src[i:], "<?php")
			k := strings.Index(src[i:], "<?=")
			if j < 0 && k < 0 {
				break
			}
			skip, width := j, 5
			if j < 0 || (k >= 0 && k < j) {
				skip, width = k, 3
			}
			line += strings.Count(src[i:i+skip+width], "\n")
			i += skip + width
			inCode = true
			continue
		}
		c := src[i]
		switch {
		case c == '\n':
			line++
			i++
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '?' && strings.HasPrefix(src[i:], "?>"):
			inCode = false
			i += 2
		case c == '#' || (c == '/' && strings.HasPrefix(src[i:], "//")):
			for i < len(src) && src[i] != '\n' && !strings.HasPrefix(src[i:], "?>") {
				i++
			}
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("line %d: unterminated comment", line)
			}
			line += strings.Count(src[i:i+2+end], "\n")
			i += end + 4
		case c == '\'' || c == '"' || c == '`':
			t, n, err := scanQuoted(src[i:], line)
			if err != nil {
				return nil, err
			}
			toks = append(toks, t)
			line += strings.Count(src[i:i+n], "\n")
			i += n
		case c == '<' && strings.HasPrefix(src[i:], "<<<"):
			n, err := scanHeredoc(src[i:], line)
			if err != nil {
				return nil, err
			}
			toks = append(toks, phpToken{kind: tokTemplate, text: "<<<…", line: line})
			line += strings.Count(src[i:i+n], "\n")
			i += n
		case c == '$' && i+1 < len(src) && isNameStart(src[i+1]):
			j := i + 1
			for j < len(src) && isNameByte(src[j]) {
				j++
			}
			toks = append(toks, phpToken{kind: tokVar, text: src[i:j], line: line})
			i = j
		case isDigit(c) || (c == '.' && i+1 < len(src) && isDigit(src[i+1])):
			j := i
			for j < len(src) && (isNameByte(src[j]) || src[j] == '.' ||
				((src[j] == '+' || src[j] == '-') && j > i && (src[j-1] == 'e' || src[j-1] == 'E') && !strings.HasPrefix(src[i:], "0x"))) {
				j++
			}
			text := src[i:j]
			t := phpToken{kind: tokNumber, text: text, line: line}
			if digits := strings.ReplaceAll(text, "_", ""); isDecimal(digits) && !strings.Contains(text, "__") &&
				!strings.HasSuffix(text, "_") && (len(digits) == 1 || digits[0] != '0') {
				t.kind, t.val = tokInt, digits
			}
			toks = append(toks, t)
			i = j
		case isNameStart(c) || (c == '\\' && i+1 < len(src) && isNameStart(src[i+1])):
			j := i
			for j < len(src) && (isNameByte(src[j]) || (src[j] == '\\' && j+1 < len(src) && isNameStart(src[j+1]))) {
				j++
			}
			toks = append(toks, phpToken{kind: tokName, text: src[i:j], line: line})
			i = j
		default:
			op := src[i : i+1]
			for _, o := range phpOperators {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			toks = append(toks, phpToken{kind: tokPunct, text: op, line: line})
			i += len(op)
		}
	}
	return toks, nil
}

func isNameStart(c byte) bool { return c == '_' || c >= 0x80 || (c|0x20) >= 'a' && (c|0x20) <= 'z' }
func isNameByte(c byte) bool  { return isNameStart(c) || isDigit(c) }
func isDigit(c byte) bool     { return c >= '0' && c <= '9' }

func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

// scanQuoted reads a '…', "…" or `…` literal at the start of s and returns its token and
// length. Single quotes know only \' and \\; double quotes PHP's escapes, and any
// interpolation ($name, {$…}) makes the value unknown; backticks run a shell and are
// never a value.
func scanQuoted(s string, line int) (phpToken, int, error) {
	q := s[0]
	var b strings.Builder
	known := q != '`'
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			t := phpToken{kind: tokTemplate, text: s[:i+1], line: line}
			if known {
				t.kind, t.val = tokString, b.String()
			}
			return t, i + 1, nil
		case c == '\\' && i+1 < len(s):
			i++
			if q == '\'' {
				if s[i] != '\'' && s[i] != '\\' {
					b.WriteByte('\\')
				}
				b.WriteByte(s[i])
				continue
			}
			n := writeEscape(&b, s[i:])
			i += n - 1
		case c == '$' && q == '"' && i+1 < len(s) && (isNameStart(s[i+1]) || s[i+1] == '{'):
			known = false
		case c == '{' && q == '"' && i+1 < len(s) && s[i+1] == '$':
			known = false
		default:
			b.WriteByte(c)
		}
	}
	return phpToken{}, 0, fmt.Errorf("line %d: unterminated string", line)
}

// writeEscape decodes one escape of a double-quoted string (s starts after the
// backslash) and returns how many bytes of s it used.
func writeEscape(b *strings.Builder, s string) int {
	switch s[0] {
	case 'n':
		b.WriteByte('\n')
	case 't':
		b.WriteByte('\t')
	case 'r':
		b.WriteByte('\r')
	case 'v':
		b.WriteByte('\v')
	case 'e':
		b.WriteByte(0x1b)
	case 'f':
		b.WriteByte('\f')
	case '\\', '$', '"':
		b.WriteByte(s[0])
	case 'x':
		n := 1
		for n < 3 && n < len(s) && isHex(s[n]) {
			n++
		}
		if n == 1 {
			b.WriteString(`\x`)
			return 1
		}
		v, _ := strconv.ParseUint(s[1:n], 16, 8)
		b.WriteByte(byte(v))
		return n
	case 'u':
		if len(s) > 2 && s[1] == '{' {
			if end := strings.IndexByte(s, '}'); end > 2 && end <= 10 {
				if v, err := strconv.ParseUint(s[2:end], 16, 32); err == nil && v <= 0x10FFFF {
					b.WriteRune(rune(v))
					return end + 1
				}
			}
		}
		b.WriteString(`\u`)
	default:
		if s[0] >= '0' && s[0] <= '7' {
			n := 1
			for n < 3 && n < len(s) && s[n] >= '0' && s[n] <= '7' {
				n++
			}
			v, _ := strconv.ParseUint(s[:n], 8, 16)
			b.WriteByte(byte(v))
			return n
		}
		b.WriteByte('\\')
		b.WriteByte(s[0])
	}
	return 1
}

func isHex(c byte) bool { return isDigit(c) || (c|0x20) >= 'a' && (c|0x20) <= 'f' }

// scanHeredoc returns the length of a heredoc or nowdoc at the start of s (PHP 7.3's
// flexible closing marker: indented, followed by anything but a name byte).
func scanHeredoc(s string, line int) (int, error) {
	i := 3
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	quote := byte(0)
	if i < len(s) && (s[i] == '\'' || s[i] == '"') {
		quote = s[i]
		i++
	}
	start := i
	for i < len(s) && isNameByte(s[i]) {
		i++
	}
	label := s[start:i]
	if label == "" {
		return 0, fmt.Errorf("line %d: heredoc without a label", line)
	}
	if quote != 0 {
		if i >= len(s) || s[i] != quote {
			return 0, fmt.Errorf("line %d: heredoc label not closed", line)
		}
		i++
	}
	for {
		nl := strings.IndexByte(s[i:], '\n')
		if nl < 0 {
			return 0, fmt.Errorf("line %d: unterminated heredoc %s", line, label)
		}
		i += nl + 1
		j := i
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if strings.HasPrefix(s[j:], label) && (j+len(label) == len(s) || !isNameByte(s[j+len(label)])) {
			return j + len(label), nil
		}
	}
}

// phpNode is a value of a config array: an array literal (isArray) or an expression,
// kept as its tokens.
type phpNode struct {
	isArray bool
	entries []phpEntry
	// dynamic says the array has entries whose keys cannot be known (a spread, a computed
	// key): a key missing from entries may still be there.
	dynamic bool
	expr    []phpToken
	line    int
}

type phpEntry struct {
	key   string // string keys, and int keys in decimal
	value *phpNode
}

// source is an expression's text for messages: its tokens with PHP's usual spacing.
func (n *phpNode) source() string {
	if n.isArray {
		return "[…]"
	}
	var b strings.Builder
	for i, t := range n.expr {
		if i > 0 && spaceBetween(n.expr[i-1], t) {
			b.WriteByte(' ')
		}
		b.WriteString(t.text)
	}
	s := b.String()
	if len(s) > 160 {
		s = s[:157] + "…"
	}
	return s
}

func spaceBetween(a, b phpToken) bool {
	if a.kind == tokPunct && (a.text == "(" || a.text == "[" || a.text == "::" || a.text == "->" || a.text == "!" || a.text == "...") {
		return false
	}
	if b.kind == tokPunct && (b.text == ")" || b.text == "]" || b.text == "," || b.text == "::" || b.text == "->") {
		return false
	}
	if a.is(tokPunct, "?") && b.is(tokPunct, ":") {
		return false
	}
	if b.is(tokPunct, "(") || b.is(tokPunct, "[") {
		return a.kind == tokPunct && a.text != ")" && a.text != "]"
	}
	return true
}

// get returns the entry for key (the last one: PHP keeps the last of duplicate keys).
func (n *phpNode) get(key string) (*phpNode, bool) {
	for i := len(n.entries) - 1; i >= 0; i-- {
		if n.entries[i].key == key {
			return n.entries[i].value, true
		}
	}
	return nil, false
}

// parseConfigFile reads a config file: the array literal its top-level `return` gives.
// Statements before it (use, declare, assignments) are skipped; a `return` of anything
// else, or none, is an error.
func parseConfigFile(src string) (*phpNode, error) {
	toks, err := tokenizePHP(src)
	if err != nil {
		return nil, err
	}
	depth := 0
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind == tokPunct {
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
			continue
		}
		if depth != 0 || t.kind != tokName || !strings.EqualFold(t.text, "return") {
			continue
		}
		end, ok := arrayLiteralEnd(toks, i+1)
		if !ok {
			return nil, fmt.Errorf("line %d: the file returns something other than an array literal", t.line)
		}
		if end < len(toks) && !toks[end].is(tokPunct, ";") {
			return nil, fmt.Errorf("line %d: the returned array is part of a larger expression", toks[end].line)
		}
		if err := checkBalanced(toks[i+1 : end]); err != nil {
			return nil, err
		}
		return parseArray(toks[i+1:end], 0)
	}
	return nil, fmt.Errorf("no top-level return of an array")
}

// arrayLiteralEnd reports whether toks[start:] begins with an array literal ([…] or
// array(…)) and returns the index just past it.
func arrayLiteralEnd(toks []phpToken, start int) (int, bool) {
	if start >= len(toks) {
		return 0, false
	}
	open := start
	if toks[start].kind == tokName && strings.EqualFold(toks[start].text, "array") {
		open++
		if open >= len(toks) || !toks[open].is(tokPunct, "(") {
			return 0, false
		}
	} else if !toks[start].is(tokPunct, "[") {
		return 0, false
	}
	depth := 0
	for i := open; i < len(toks); i++ {
		if toks[i].kind != tokPunct {
			continue
		}
		switch toks[i].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
	}
	return 0, false
}

// parseArray reads toks, exactly one array literal, into a node.
func parseArray(toks []phpToken, depth int) (*phpNode, error) {
	if depth > maxPHPDepth {
		return nil, fmt.Errorf("line %d: arrays nested deeper than %d", toks[0].line, maxPHPDepth)
	}
	n := &phpNode{isArray: true, line: toks[0].line}
	inner := toks[1 : len(toks)-1]
	if toks[0].kind == tokName { // array( … )
		inner = toks[2 : len(toks)-1]
	}
	next := 0 // PHP's next integer key
	for _, elem := range splitTopLevel(inner, ",") {
		if len(elem) == 0 {
			continue // the trailing comma
		}
		if elem[0].is(tokPunct, "...") {
			n.dynamic = true
			continue
		}
		keyToks, valToks := elem, []phpToken(nil)
		if parts := splitTopLevel(elem, "=>"); len(parts) == 2 {
			keyToks, valToks = parts[0], parts[1]
		} else if len(parts) > 2 {
			return nil, fmt.Errorf("line %d: an array element with two =>", elem[0].line)
		} else {
			keyToks, valToks = nil, elem
		}
		if len(valToks) == 0 {
			return nil, fmt.Errorf("line %d: an array element without a value", elem[0].line)
		}
		key, known := "", true
		switch {
		case keyToks == nil:
			key = strconv.Itoa(next)
			next++
		case len(keyToks) == 1 && keyToks[0].kind == tokString:
			key = keyToks[0].val
			if v, err := strconv.Atoi(key); err == nil && strconv.Itoa(v) == key {
				next = max(next, v+1) // "8" is the integer key 8
			}
		case len(keyToks) == 1 && keyToks[0].kind == tokInt:
			v, err := strconv.Atoi(keyToks[0].val)
			if err != nil {
				known = false
				break
			}
			key = strconv.Itoa(v)
			next = max(next, v+1)
		default:
			known = false
		}
		if !known {
			n.dynamic = true
			continue
		}
		var value *phpNode
		if end, ok := arrayLiteralEnd(valToks, 0); ok && end == len(valToks) {
			v, err := parseArray(valToks, depth+1)
			if err != nil {
				return nil, err
			}
			value = v
		} else {
			if err := checkBalanced(valToks); err != nil {
				return nil, err
			}
			value = &phpNode{expr: valToks, line: valToks[0].line}
		}
		n.entries = append(n.entries, phpEntry{key: key, value: value})
	}
	return n, nil
}

// splitTopLevel splits toks at the separator tokens outside any bracket.
func splitTopLevel(toks []phpToken, sep string) [][]phpToken {
	var out [][]phpToken
	depth, start := 0, 0
	for i, t := range toks {
		if t.kind != tokPunct {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
		case sep:
			if depth == 0 {
				out = append(out, toks[start:i])
				start = i + 1
			}
		}
	}
	return append(out, toks[start:])
}

// checkBalanced refuses an expression whose brackets do not pair up or nest too deep.
func checkBalanced(toks []phpToken) error {
	var stack []byte
	for _, t := range toks {
		if t.kind != tokPunct {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			if len(stack) >= maxPHPDepth {
				return fmt.Errorf("line %d: brackets nested deeper than %d", t.line, maxPHPDepth)
			}
			stack = append(stack, t.text[0])
		case ")", "]", "}":
			want := map[string]byte{")": '(', "]": '[', "}": '{'}[t.text]
			if len(stack) == 0 || stack[len(stack)-1] != want {
				return fmt.Errorf("line %d: unbalanced %q", t.line, t.text)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("line %d: unclosed %q", toks[len(toks)-1].line, string(stack[len(stack)-1]))
	}
	return nil
}
