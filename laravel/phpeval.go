package laravel

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/laraq/laraq/internal/php"
)

// The expressions Laravel's config files use for the settings laraq reads, and nothing
// more. The grammar, over the tokens of phpfile.go:
//
//	expr    = unary { "." unary }                       string concatenation
//	unary   = cast unary | "-" INT | primary
//	cast    = "(" ("string" | "int" | "integer" | "bool" | "boolean") ")"
//	primary = STRING | INT | "true" | "false" | "null" | "(" expr ")"
//	        | "env" "(" STRING [ "," expr ] ")"          Laravel's env(): process
//	                                                     environment, then .env; true,
//	                                                     false, null, empty keywords
//	        | STR "::" "slug" "(" expr [ "," expr ] ")"  Illuminate\Support\Str::slug
//	        | "database_path" "(" [ expr ] ")"          ROOT/database[/path]
//	STR     = "Str" | "\Str" | ["\"] "Illuminate\Support\Str"
//
// Names are case-insensitive as in PHP; strings are single-quoted, or double-quoted
// without interpolation. Anything else (a variable, another function, an operator, a
// constant, named arguments) cannot be evaluated: the value's caller then warns and falls
// back to the skeleton's expression. env()'s default is evaluated only when the variable
// is unset, so an expression laraq cannot evaluate there only matters when it is used.

// maxExprDepth bounds the recursion of casts, parentheses and calls within one expression.
const maxExprDepth = 64

type phpKind uint8

const (
	phpNull phpKind = iota
	phpBool
	phpInt
	phpString
)

// phpValue is a PHP scalar.
type phpValue struct {
	kind phpKind
	b    bool
	i    int64
	s    string
}

func phpStr(s string) phpValue { return phpValue{kind: phpString, s: s} }

// str is PHP's (string) conversion: null and false are "", true is "1".
func (v phpValue) str() string {
	switch v.kind {
	case phpBool:
		if v.b {
			return "1"
		}
		return ""
	case phpInt:
		return strconv.FormatInt(v.i, 10)
	case phpString:
		return v.s
	}
	return ""
}

// toInt is PHP's (int) conversion; numeric says whether a string was numeric text.
func (v phpValue) toInt() (n int64, numeric bool) {
	switch v.kind {
	case phpBool:
		if v.b {
			return 1, true
		}
		return 0, true
	case phpInt:
		return v.i, true
	case phpString:
		return php.Intval(v.s), php.IsNumeric(v.s)
	}
	return 0, true
}

func (v phpValue) toBool() bool {
	switch v.kind {
	case phpBool:
		return v.b
	case phpInt:
		return v.i != 0
	case phpString:
		return v.s != "" && v.s != "0"
	}
	return false
}

// php is the value as PHP's var_export would show it, for messages.
func (v phpValue) php() string {
	switch v.kind {
	case phpBool:
		return strconv.FormatBool(v.b)
	case phpInt:
		return strconv.FormatInt(v.i, 10)
	case phpString:
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v.s) + "'"
	}
	return "null"
}

type exprKind uint8

const (
	exLit exprKind = iota
	exEnv
	exSlug
	exCast
	exConcat
	exDatabasePath
	exUnknown
)

// phpExpr is a parsed expression.
type phpExpr struct {
	kind exprKind
	lit  phpValue
	name string // exEnv: the variable; exCast: string, int or bool
	args []*phpExpr
	src  string // exUnknown: the text laraq cannot evaluate
}

// parseExpr parses an expression's tokens. It never fails: what it cannot read becomes
// an exUnknown node, as small as the call arguments allow, so that env('X', f()) is still
// env() with an unknown default.
func parseExpr(toks []phpToken) *phpExpr { return parseExprDepth(toks, 0) }

func parseExprDepth(toks []phpToken, depth int) *phpExpr {
	unknown := &phpExpr{kind: exUnknown, src: (&phpNode{expr: toks}).source()}
	if len(toks) == 0 || depth > maxExprDepth {
		return unknown
	}
	p := &exprParser{toks: toks, depth: depth}
	e, err := p.concat()
	if err != nil || p.pos != len(toks) {
		return unknown
	}
	return e
}

type exprParser struct {
	toks  []phpToken
	pos   int
	depth int
}

var errSyntax = errors.New("not an expression laraq evaluates")

func (p *exprParser) peek() (phpToken, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return phpToken{}, false
}

func (p *exprParser) concat() (*phpExpr, error) {
	first, err := p.unary(0)
	if err != nil {
		return nil, err
	}
	parts := []*phpExpr{first}
	for {
		t, ok := p.peek()
		if !ok || !t.is(tokPunct, ".") {
			break
		}
		p.pos++
		next, err := p.unary(0)
		if err != nil {
			return nil, err
		}
		parts = append(parts, next)
	}
	if len(parts) == 1 {
		return first, nil
	}
	return &phpExpr{kind: exConcat, args: parts}, nil
}

var castNames = map[string]string{"string": "string", "int": "int", "integer": "int", "bool": "bool", "boolean": "bool"}

func (p *exprParser) unary(depth int) (*phpExpr, error) {
	if depth+p.depth > maxExprDepth {
		return nil, errSyntax
	}
	t, ok := p.peek()
	if !ok {
		return nil, errSyntax
	}
	if t.is(tokPunct, "(") && p.pos+2 < len(p.toks) && p.toks[p.pos+1].kind == tokName && p.toks[p.pos+2].is(tokPunct, ")") {
		if cast, ok := castNames[strings.ToLower(p.toks[p.pos+1].text)]; ok {
			p.pos += 3
			x, err := p.unary(depth + 1)
			if err != nil {
				return nil, err
			}
			return &phpExpr{kind: exCast, name: cast, args: []*phpExpr{x}}, nil
		}
	}
	if t.is(tokPunct, "-") && p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == tokInt {
		n, err := strconv.ParseInt("-"+p.toks[p.pos+1].val, 10, 64)
		if err != nil {
			return nil, errSyntax // beyond int64: PHP makes it a float
		}
		p.pos += 2
		return &phpExpr{kind: exLit, lit: phpValue{kind: phpInt, i: n}}, nil
	}
	return p.primary(depth)
}

func (p *exprParser) primary(depth int) (*phpExpr, error) {
	t, _ := p.peek()
	switch t.kind {
	case tokString:
		p.pos++
		return &phpExpr{kind: exLit, lit: phpStr(t.val)}, nil
	case tokInt:
		n, err := strconv.ParseInt(t.val, 10, 64)
		if err != nil {
			return nil, errSyntax
		}
		p.pos++
		return &phpExpr{kind: exLit, lit: phpValue{kind: phpInt, i: n}}, nil
	case tokPunct:
		if t.text != "(" {
			return nil, errSyntax
		}
		end := p.closing(p.pos)
		if end < 0 {
			return nil, errSyntax
		}
		inner := parseExprDepth(p.toks[p.pos+1:end], p.depth+depth+1)
		if inner.kind == exUnknown {
			return nil, errSyntax
		}
		p.pos = end + 1
		return inner, nil
	case tokName:
	default:
		return nil, errSyntax
	}
	name := strings.ToLower(strings.TrimPrefix(t.text, `\`))
	switch name {
	case "true", "false":
		p.pos++
		return &phpExpr{kind: exLit, lit: phpValue{kind: phpBool, b: name == "true"}}, nil
	case "null":
		p.pos++
		return &phpExpr{kind: exLit}, nil
	}
	fn := ""
	switch {
	case name == "env" || name == "database_path":
		fn = name
		p.pos++
	case (name == "str" || name == `illuminate\support\str`) && p.pos+2 < len(p.toks) &&
		p.toks[p.pos+1].is(tokPunct, "::") && p.toks[p.pos+2].kind == tokName && strings.EqualFold(p.toks[p.pos+2].text, "slug"):
		fn = "slug"
		p.pos += 3
	default:
		return nil, errSyntax
	}
	if t, ok := p.peek(); !ok || !t.is(tokPunct, "(") {
		return nil, errSyntax
	}
	end := p.closing(p.pos)
	if end < 0 {
		return nil, errSyntax
	}
	var args []*phpExpr
	if inner := p.toks[p.pos+1 : end]; len(inner) > 0 {
		parts := splitTopLevel(inner, ",")
		if len(parts[len(parts)-1]) == 0 {
			parts = parts[:len(parts)-1] // PHP 7.3+ allows a trailing comma in calls
		}
		for _, a := range parts {
			if len(a) >= 2 && a[0].kind == tokName && a[1].is(tokPunct, ":") {
				return nil, errSyntax // a named argument
			}
			args = append(args, parseExprDepth(a, p.depth+depth+1))
		}
	}
	p.pos = end + 1
	switch fn {
	case "env":
		if len(args) < 1 || len(args) > 2 || args[0].kind != exLit || args[0].lit.kind != phpString {
			return nil, errSyntax
		}
		e := &phpExpr{kind: exEnv, name: args[0].lit.s}
		if len(args) == 2 {
			e.args = []*phpExpr{args[1]}
		}
		return e, nil
	case "slug":
		if len(args) < 1 || len(args) > 2 {
			return nil, errSyntax
		}
		return &phpExpr{kind: exSlug, args: args}, nil
	default: // database_path
		if len(args) > 1 {
			return nil, errSyntax
		}
		return &phpExpr{kind: exDatabasePath, args: args}, nil
	}
}

// closing returns the index of the bracket closing the one at open, or -1.
func (p *exprParser) closing(open int) int {
	depth := 0
	for i := open; i < len(p.toks); i++ {
		if p.toks[i].kind != tokPunct {
			continue
		}
		switch p.toks[i].text {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// evaluator evaluates expressions against an application's environment.
type evaluator struct {
	// env is what Laravel's env() sees for a variable: value and where it came from;
	// ok false when it is not set.
	env func(name string) (envValue, Origin, bool)
	// root is the application root database_path() resolves against; "" when unknown.
	root string
	// reads lists the variables env() looked up, set or not.
	reads []string
	// lossy notes (int) casts of text that is not a number, which PHP turns into 0 or a
	// prefix silently.
	lossy []string
}

// evalResult is a value and, when it is exactly a variable's value (through casts), that
// variable and where it was set.
type evalResult struct {
	v      phpValue
	from   string
	origin Origin
}

// errCannotEvaluate wraps what laraq cannot evaluate, naming the part.
type cannotEvaluate struct{ part string }

func (e *cannotEvaluate) Error() string { return fmt.Sprintf("cannot evaluate %s", e.part) }

func (ev *evaluator) eval(e *phpExpr) (evalResult, error) {
	switch e.kind {
	case exLit:
		return evalResult{v: e.lit}, nil
	case exEnv:
		ev.reads = append(ev.reads, e.name)
		if v, origin, ok := ev.env(e.name); ok {
			var pv phpValue
			switch {
			case v.null:
			case v.bool:
				pv = phpValue{kind: phpBool, b: v.str == "1"}
			default:
				pv = phpStr(v.str)
			}
			return evalResult{v: pv, from: e.name, origin: origin}, nil
		}
		if len(e.args) == 0 {
			return evalResult{}, nil
		}
		return ev.eval(e.args[0])
	case exSlug:
		title, err := ev.eval(e.args[0])
		if err != nil {
			return evalResult{}, err
		}
		sep := "-"
		if len(e.args) == 2 {
			s, err := ev.eval(e.args[1])
			if err != nil {
				return evalResult{}, err
			}
			sep = s.v.str()
		}
		return evalResult{v: phpStr(php.Slug(title.v.str(), sep))}, nil
	case exCast:
		x, err := ev.eval(e.args[0])
		if err != nil {
			return evalResult{}, err
		}
		switch e.name {
		case "string":
			x.v = phpStr(x.v.str())
		case "int":
			n, numeric := x.v.toInt()
			if !numeric {
				what := x.v.php()
				if x.from != "" {
					what = fmt.Sprintf("%s=%s (%s)", x.from, x.v.str(), x.origin)
				}
				ev.lossy = append(ev.lossy, fmt.Sprintf("%s is not a number: (int) makes it %d, as in PHP", what, n))
			}
			x.v = phpValue{kind: phpInt, i: n}
		default:
			x.v = phpValue{kind: phpBool, b: x.v.toBool()}
		}
		return x, nil
	case exConcat:
		var b strings.Builder
		for _, a := range e.args {
			r, err := ev.eval(a)
			if err != nil {
				return evalResult{}, err
			}
			b.WriteString(r.v.str())
		}
		return evalResult{v: phpStr(b.String())}, nil
	case exDatabasePath:
		if ev.root == "" {
			return evalResult{}, &cannotEvaluate{part: "database_path() without the application root"}
		}
		dir := filepath.Join(ev.root, "database")
		if len(e.args) == 1 {
			p, err := ev.eval(e.args[0])
			if err != nil {
				return evalResult{}, err
			}
			// Application::joinPaths: base . '/' . ltrim(path, '/') when path is not ''.
			if s := strings.TrimLeft(p.v.str(), "/"); p.v.str() != "" {
				dir += "/" + s
			}
		}
		return evalResult{v: phpStr(dir)}, nil
	}
	return evalResult{}, &cannotEvaluate{part: e.src}
}

// envNames lists the variables an expression can read, in order.
func (e *phpExpr) envNames() []string {
	var out []string
	var walk func(*phpExpr)
	walk = func(x *phpExpr) {
		if x.kind == exEnv {
			out = append(out, x.name)
		}
		for _, a := range x.args {
			walk(a)
		}
	}
	walk(e)
	return out
}

// literals lists the string literals of an expression, in order.
func (e *phpExpr) literals() []string {
	var out []string
	var walk func(*phpExpr)
	walk = func(x *phpExpr) {
		if x.kind == exLit && x.lit.kind == phpString {
			out = append(out, x.lit.s)
		}
		for _, a := range x.args {
			walk(a)
		}
	}
	walk(e)
	return out
}

// hasKind reports whether the expression contains a node of kind k.
func (e *phpExpr) hasKind(k exprKind) bool {
	if e.kind == k {
		return true
	}
	for _, a := range e.args {
		if a.hasKind(k) {
			return true
		}
	}
	return false
}
