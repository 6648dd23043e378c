package laravel

import (
	"fmt"
	"strings"
)

// A reader for the part of PHP that Laravel configuration files are written in: `use`
// imports and `return [ … ];` with array literals, strings, numbers, true/false/null,
// function and static calls (env(), Str::slug()), X::class, concatenation, casts, ??,
// ?: and arithmetic. It never executes anything: the evaluator (horizon.go) gives
// meaning to the few calls it knows and reports the rest. Input is outside text, so the
// reader never panics and bounds its nesting.

type phpTokKind uint8

const (
	tEOF phpTokKind = iota
	tString
	tNumber
	tName
	tVariable
	tOp
)

type phpTok struct {
	kind phpTokKind
	text string // a string's value; a name, number or operator as written
	raw  bool   // a double-quoted string with interpolation: its value is unknown
	pos  int    // byte offset in the source
}

// phpSyntaxError is a place in the file the reader cannot follow.
type phpSyntaxError struct {
	line int
	msg  string
}

func (e *phpSyntaxError) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

func lineOf(src string, pos int) int {
	if pos > len(src) {
		pos = len(src)
	}
	return strings.Count(src[:pos], "\n") + 1
}

// phpOps are the operators the reader knows, longest first.
var phpOps = []string{"===", "!==", "<=>", "**=", "...", "??=", "=>", "::", "??", "?:", "==", "!=", "<=", ">=",
	"&&", "||", "->", "++", "--", ".=", "+=", "-=", "*=", "/=", "(", ")", "[", "]", "{", "}", ",", ";",
	".", "?", ":", "+", "-", "*", "/", "%", "!", "=", "<", ">", "&", "|", "^", "~", "@"}

// lexPHP splits the PHP code of src (from the first "<?php" on) into tokens.
func lexPHP(src string) ([]phpTok, error) {
	start := strings.Index(src, "<?php")
	if start < 0 {
		return nil, &phpSyntaxError{1, "no <?php open tag"}
	}
	i := start + len("<?php")
	var toks []phpTok
	fail := func(pos int, format string, args ...any) ([]phpTok, error) {
		return nil, &phpSyntaxError{lineOf(src, pos), fmt.Sprintf(format, args...)}
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '#' && strings.HasPrefix(src[i:], "#["):
			return fail(i, "attributes are not supported")
		case c == '#' || strings.HasPrefix(src[i:], "//"):
			for i < len(src) && src[i] != '\n' {
				if strings.HasPrefix(src[i:], "?>") {
					return fail(i, "closing tag ?> is not supported")
				}
				i++
			}
		case strings.HasPrefix(src[i:], "/*"):
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return fail(i, "unterminated comment")
			}
			i += end + 4
		case strings.HasPrefix(src[i:], "?>"):
			return fail(i, "closing tag ?> is not supported")
		case strings.HasPrefix(src[i:], "<<<"):
			return fail(i, "heredoc and nowdoc strings are not supported")
		case c == '\'':
			s, n, ok := lexSingle(src[i:])
			if !ok {
				return fail(i, "unterminated string")
			}
			toks = append(toks, phpTok{kind: tString, text: s, pos: i})
			i += n
		case c == '"':
			s, n, interp, ok := lexDouble(src[i:])
			if !ok {
				return fail(i, "unterminated string")
			}
			toks = append(toks, phpTok{kind: tString, text: s, raw: interp, pos: i})
			i += n
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (hzIsNameByte(src[j]) || src[j] == '.' ||
				(src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E') && !strings.HasPrefix(src[i:], "0x")) {
				j++
			}
			toks = append(toks, phpTok{kind: tNumber, text: src[i:j], pos: i})
			i = j
		case c == '$':
			j := i + 1
			for j < len(src) && hzIsNameByte(src[j]) {
				j++
			}
			toks = append(toks, phpTok{kind: tVariable, text: src[i:j], pos: i})
			i = j
		case hzIsNameByte(c) || c == '\\':
			j := i
			for j < len(src) && (hzIsNameByte(src[j]) || src[j] == '\\') {
				j++
			}
			toks = append(toks, phpTok{kind: tName, text: src[i:j], pos: i})
			i = j
		default:
			op := ""
			for _, o := range phpOps {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return fail(i, "unexpected character %q", c)
			}
			toks = append(toks, phpTok{kind: tOp, text: op, pos: i})
			i += len(op)
		}
	}
	return append(toks, phpTok{kind: tEOF, pos: len(src)}), nil
}

func hzIsNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// lexSingle reads a single-quoted string: only \' and \\ are escapes.
func lexSingle(s string) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\'':
			return b.String(), i + 1, true
		case '\\':
			if i+1 < len(s) && (s[i+1] == '\'' || s[i+1] == '\\') {
				i++
			}
		}
		b.WriteByte(s[i])
	}
	return "", 0, false
}

// lexDouble reads a double-quoted string with PHP's simple escapes; a "$" or "{$"
// starts an interpolation, whose value the reader cannot know.
func lexDouble(s string) (string, int, bool, bool) {
	var b strings.Builder
	interp := false
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), i + 1, interp, true
		case c == '$' && i+1 < len(s) && (hzIsNameByte(s[i+1]) || s[i+1] == '{'):
			interp = true
		case c == '{' && i+1 < len(s) && s[i+1] == '$':
			interp = true
		case c == '\\' && i+1 < len(s):
			i++
			if r, ok := map[byte]string{'n': "\n", 't': "\t", 'r': "\r", 'v': "\v", 'f': "\f", 'e': "\x1b",
				'\\': "\\", '$': "$", '"': "\""}[s[i]]; ok {
				b.WriteString(r)
				continue
			}
			b.WriteByte('\\') // an unknown escape stays as written
			c = s[i]
		}
		b.WriteByte(c)
	}
	return "", 0, false, false
}

// hzNode is one parsed expression.
type hzNode struct {
	kind    phpNodeKind
	str     string // string value, name, operator, cast type
	args    []*hzNode
	entries []hzEntry
	src     string // the expression's source text
}

type hzEntry struct {
	key   *hzNode // nil: the next integer key
	value *hzNode
}

type phpNodeKind uint8

const (
	nUnknown phpNodeKind = iota // not understood; src says what it was
	nString
	nNumber
	nConst       // true, false, null or another constant name
	nArray       // entries
	nCall        // str(args)
	nStaticCall  // str = "Class::method"
	nClassConst  // str = class name (X::class)
	nBinary      // str = operator, args = left, right
	nCast        // str = type, args = operand
	nUnary       // str = operator, args = operand
	nTernary     // args = cond, then (nil for ?:), else
	nInterpolate // a double-quoted string with variables
	nVariable
)

const phpMaxDepth = 200

type phpParser struct {
	src   string
	toks  []phpTok
	i     int
	depth int
}

func (p *phpParser) peek() phpTok { return p.toks[p.i] }

// at returns the token k places ahead (the end-of-file token beyond the last).
func (p *phpParser) at(k int) phpTok {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

// kw reports whether the next token is the keyword (PHP keywords ignore case).
func (p *phpParser) kw(word string) bool {
	t := p.toks[p.i]
	return t.kind == tName && strings.EqualFold(t.text, word)
}

func (p *phpParser) is(kind phpTokKind, text string) bool {
	t := p.toks[p.i]
	return t.kind == kind && (text == "" || t.text == text)
}

func (p *phpParser) next() phpTok {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *phpParser) errorf(format string, args ...any) error {
	return &phpSyntaxError{lineOf(p.src, p.peek().pos), fmt.Sprintf(format, args...)}
}

func (p *phpParser) expect(text string) error {
	if !p.is(tOp, text) {
		return p.errorf("expected %q, found %s", text, p.describe())
	}
	p.next()
	return nil
}

func (p *phpParser) describe() string {
	t := p.peek()
	switch t.kind {
	case tEOF:
		return "the end of the file"
	case tString:
		return "a string"
	}
	return fmt.Sprintf("%q", t.text)
}

// skipTo moves past tokens up to (not including) one of the stop operators at depth 0.
func (p *phpParser) skipTo(stops ...string) {
	depth := 0
	for !p.is(tEOF, "") {
		t := p.peek()
		if t.kind == tOp {
			switch t.text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					for _, s := range stops {
						if s == t.text {
							return
						}
					}
					return
				}
				depth--
			default:
				if depth == 0 {
					for _, s := range stops {
						if s == t.text {
							return
						}
					}
				}
			}
		}
		p.next()
	}
}

// expr parses an expression; on a syntax it does not know it skips to the end of the
// expression (the next ",", "]", ")" or ";" at its level) and returns an nUnknown node.
func (p *phpParser) expr() *hzNode {
	start := p.i
	n, err := p.ternary()
	if err != nil || !(p.is(tOp, ",") || p.is(tOp, "]") || p.is(tOp, ")") || p.is(tOp, ";") || p.is(tOp, "=>") || p.is(tEOF, "")) {
		p.i = start
		p.skipTo(",", "]", ")", ";")
		return &hzNode{kind: nUnknown, src: p.text(start, p.i)}
	}
	n.src = p.text(start, p.i)
	return n
}

// text is the source of tokens from..to-1 (up to where token to begins), trimmed.
func (p *phpParser) text(from, to int) string {
	if from >= to {
		return ""
	}
	return strings.TrimSpace(p.src[p.toks[from].pos:p.toks[to].pos])
}

func (p *phpParser) enter() error {
	p.depth++
	if p.depth > phpMaxDepth {
		return p.errorf("nested deeper than %d", phpMaxDepth)
	}
	return nil
}

func (p *phpParser) ternary() (*hzNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	cond, err := p.coalesce()
	if err != nil {
		return nil, err
	}
	switch {
	case p.is(tOp, "?:"):
		p.next()
		els, err := p.ternary()
		if err != nil {
			return nil, err
		}
		return &hzNode{kind: nTernary, args: []*hzNode{cond, nil, els}}, nil
	case p.is(tOp, "?"):
		p.next()
		then, err := p.ternary()
		if err != nil {
			return nil, err
		}
		if err := p.expect(":"); err != nil {
			return nil, err
		}
		els, err := p.ternary()
		if err != nil {
			return nil, err
		}
		return &hzNode{kind: nTernary, args: []*hzNode{cond, then, els}}, nil
	}
	return cond, nil
}

func (p *phpParser) coalesce() (*hzNode, error) {
	l, err := p.binary(0)
	if err != nil || !p.is(tOp, "??") {
		return l, err
	}
	p.next()
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	r, err := p.coalesce()
	if err != nil {
		return nil, err
	}
	return &hzNode{kind: nBinary, str: "??", args: []*hzNode{l, r}}, nil
}

// phpLevels are the left-associative binary operators from loosest to tightest (PHP 8:
// "." binds looser than + and -).
var phpLevels = [][]string{{"."}, {"+", "-"}, {"*", "/", "%"}}

func (p *phpParser) binary(level int) (*hzNode, error) {
	if level == len(phpLevels) {
		return p.unary()
	}
	l, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		op := ""
		for _, o := range phpLevels[level] {
			if p.is(tOp, o) {
				op = o
			}
		}
		if op == "" {
			return l, nil
		}
		p.next()
		r, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		l = &hzNode{kind: nBinary, str: op, args: []*hzNode{l, r}}
	}
}

var phpCasts = map[string]string{"int": "int", "integer": "int", "string": "string", "bool": "bool",
	"boolean": "bool", "float": "float", "double": "float"}

func (p *phpParser) unary() (*hzNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	if p.is(tOp, "(") && p.at(1).kind == tName && p.at(2).kind == tOp && p.at(2).text == ")" {
		if cast, ok := phpCasts[strings.ToLower(p.at(1).text)]; ok {
			p.i += 3
			x, err := p.unary()
			if err != nil {
				return nil, err
			}
			return &hzNode{kind: nCast, str: cast, args: []*hzNode{x}}, nil
		}
	}
	if p.is(tOp, "-") || p.is(tOp, "+") || p.is(tOp, "!") {
		op := p.next().text
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &hzNode{kind: nUnary, str: op, args: []*hzNode{x}}, nil
	}
	return p.primary()
}

func (p *phpParser) primary() (*hzNode, error) {
	t := p.peek()
	switch {
	case t.kind == tString:
		p.next()
		if t.raw {
			return &hzNode{kind: nInterpolate}, nil
		}
		return &hzNode{kind: nString, str: t.text}, nil
	case t.kind == tNumber:
		p.next()
		return &hzNode{kind: nNumber, str: t.text}, nil
	case t.kind == tVariable:
		p.next()
		return &hzNode{kind: nVariable, str: t.text}, nil
	case t.kind == tOp && t.text == "[":
		p.next()
		return p.array("]")
	case t.kind == tOp && t.text == "(":
		p.next()
		x, err := p.ternary()
		if err != nil {
			return nil, err
		}
		return x, p.expect(")")
	case t.kind == tName && strings.EqualFold(t.text, "array") && p.at(1).kind == tOp && p.at(1).text == "(":
		p.i += 2
		return p.array(")")
	case t.kind == tName:
		p.next()
		name := t.text
		if p.is(tOp, "::") {
			p.next()
			member := p.next()
			if member.kind != tName {
				return nil, p.errorf("expected a name after ::")
			}
			if strings.EqualFold(member.text, "class") {
				return &hzNode{kind: nClassConst, str: name}, nil
			}
			if p.is(tOp, "(") {
				p.next()
				args, err := p.args()
				if err != nil {
					return nil, err
				}
				return &hzNode{kind: nStaticCall, str: name + "::" + member.text, args: args}, nil
			}
			return &hzNode{kind: nConst, str: name + "::" + member.text}, nil
		}
		if p.is(tOp, "(") {
			p.next()
			args, err := p.args()
			if err != nil {
				return nil, err
			}
			return &hzNode{kind: nCall, str: name, args: args}, nil
		}
		return &hzNode{kind: nConst, str: name}, nil
	}
	return nil, p.errorf("unexpected %s", p.describe())
}

func (p *phpParser) args() ([]*hzNode, error) {
	var args []*hzNode
	for !p.is(tOp, ")") {
		if p.is(tName, "") && p.at(1).kind == tOp && p.at(1).text == ":" {
			return nil, p.errorf("named arguments are not supported")
		}
		a, err := p.ternary()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		if !p.is(tOp, ",") {
			break
		}
		p.next()
	}
	return args, p.expect(")")
}

// array parses entries up to the closing token. A value the reader does not understand
// becomes an nUnknown entry; the other entries are still read.
func (p *phpParser) array(closing string) (*hzNode, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	n := &hzNode{kind: nArray}
	for !p.is(tOp, closing) {
		if p.is(tEOF, "") {
			return nil, p.errorf("unterminated array")
		}
		if p.is(tOp, "...") {
			return nil, p.errorf("array unpacking is not supported")
		}
		first := p.expr()
		e := hzEntry{value: first}
		if p.is(tOp, "=>") {
			p.next()
			start := p.i
			e = hzEntry{key: first, value: p.expr()}
			if !p.is(tOp, ",") && !p.is(tOp, closing) {
				// e.g. the "=>" of an arrow function: the value is not understood.
				p.i = start
				p.skipTo(",", closing)
				e.value = &hzNode{kind: nUnknown, src: p.text(start, p.i)}
			}
		}
		n.entries = append(n.entries, e)
		if !p.is(tOp, ",") {
			break
		}
		p.next()
	}
	return n, p.expect(closing)
}

// phpFile is what the reader takes from a configuration file.
type phpFile struct {
	imports map[string]string // lower-cased alias → fully qualified class name
	ret     *hzNode           // the returned expression
	skipped []string          // statements before return that were not understood
}

// parsePHPConfig reads the imports and the returned expression of a config file.
func parsePHPConfig(src string) (*phpFile, error) {
	toks, err := lexPHP(src)
	if err != nil {
		return nil, err
	}
	p := &phpParser{src: src, toks: toks}
	f := &phpFile{imports: map[string]string{}}
	for !p.is(tEOF, "") {
		switch {
		case p.kw("use"):
			p.next()
			if p.kw("function") || p.kw("const") {
				p.skipTo(";")
				p.next()
				continue
			}
			for {
				name := p.next()
				if name.kind != tName {
					return nil, p.errorf("expected a class name after use")
				}
				if p.is(tOp, "{") {
					return nil, p.errorf("group use declarations are not supported")
				}
				fq := strings.TrimPrefix(name.text, `\`)
				alias := fq[strings.LastIndexByte(fq, '\\')+1:]
				if p.kw("as") {
					p.next()
					a := p.next()
					if a.kind != tName {
						return nil, p.errorf("expected an alias after as")
					}
					alias = a.text
				}
				f.imports[strings.ToLower(alias)] = fq
				if !p.is(tOp, ",") {
					break
				}
				p.next()
			}
			if err := p.expect(";"); err != nil {
				return nil, err
			}
		case p.kw("return"):
			p.next()
			start := p.i
			ret, err := p.ternary()
			if err != nil {
				return nil, err
			}
			if !p.is(tOp, ";") && !p.is(tEOF, "") {
				return nil, p.errorf("expected \";\" after the returned value, found %s", p.describe())
			}
			ret.src = p.text(start, p.i)
			f.ret = ret
			return f, nil
		default:
			start := p.i
			p.skipTo(";")
			f.skipped = append(f.skipped, p.text(start, p.i))
			if !p.is(tEOF, "") {
				p.next()
			}
		}
	}
	return nil, &phpSyntaxError{lineOf(src, len(src)), "no return statement"}
}
