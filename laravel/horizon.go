package laravel

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/internal/rdb"
)

// Horizon is what laraq reads from an application's config/horizon.php (laravel/horizon
// 5.x) to write Horizon's records as the application's Horizon would.
//
// HorizonServiceProvider merges the package's own config/horizon.php under the
// application's with array_merge, one level deep: a top-level key the application leaves
// out takes the package default (prefix Str::slug(APP_NAME, '_').'_horizon:', use
// "default", the stock trim minutes, no silenced classes, environments production and
// local), while a key it sets replaces the default whole (a trim array without "failed"
// has no failed setting).
type Horizon struct {
	// Prefix is horizon.prefix as evaluated. Horizon uses "horizon:" when it is empty
	// (EffectivePrefix).
	Prefix string
	// Use is horizon.use, the Redis connection (config/database.php) Horizon stores its
	// records on, with the prefix above instead of the connection's.
	Use string
	// Trim is horizon.trim in minutes; a key the file does not set (or sets to null) is
	// 0, which rdb.HorizonTrim reads as Horizon's own fallback.
	Trim rdb.HorizonTrim
	// Silenced is horizon.silenced: the job classes Horizon lists as silenced.
	Silenced []string
	// Environments are the keys of horizon.environments, in order. A laraq master should
	// report an environment outside them, or the dashboard shows the supervisors planned
	// for it as inactive rows.
	Environments []string
	// Unevaluated lists what the reader could not evaluate; those settings keep their
	// defaults above. Empty when the whole file was understood.
	Unevaluated []HorizonUnevaluated
}

// HorizonUnevaluated is a setting of config/horizon.php laraq could not evaluate.
type HorizonUnevaluated struct {
	Key    string // e.g. "prefix", "trim.failed", "silenced.2"
	Expr   string // the PHP source of the value
	Reason string
}

func (u HorizonUnevaluated) String() string {
	return fmt.Sprintf("horizon.%s = %s: %s", u.Key, u.Expr, u.Reason)
}

// EffectivePrefix is the prefix Horizon's keys get (Horizon::use: prefix ?: 'horizon:').
func (h *Horizon) EffectivePrefix() string {
	if h.Prefix == "" {
		return rdb.DefaultHorizonPrefix
	}
	return h.Prefix
}

// HorizonDefaults is what Horizon uses without a config/horizon.php of the application
// (the package's config file) for an application named appName (APP_NAME).
func HorizonDefaults(appName string) *Horizon {
	return &Horizon{
		Prefix: php.Slug(appName, "_") + "_horizon:",
		Use:    "default",
		Trim: rdb.HorizonTrim{Recent: 60, Pending: 60, Completed: 60, RecentFailed: 10080, Failed: 10080,
			Monitored: 10080},
		Environments: []string{"production", "local"},
	}
}

// ParseHorizonConfig reads the text of config/horizon.php. env looks a variable up as
// Laravel's env() sees it: the process environment first, then .env (the raw value; the
// true/false/null/empty keywords and surrounding quotes are applied here). It evaluates
// literals, env('NAME', default), Str::slug(…, '_' or '-'), Class::class (with the
// file's use imports), concatenation, casts, ??, ?: and arithmetic; settings written
// otherwise (config() calls, variables, other functions) are listed in Unevaluated and
// keep Horizon's defaults. The error is for a file that is not a PHP file returning an
// array.
func ParseHorizonConfig(src []byte, env func(name string) (string, bool)) (*Horizon, error) {
	f, err := parsePHPConfig(string(src))
	if err != nil {
		return nil, fmt.Errorf("config/horizon.php: %w", err)
	}
	if f.ret.kind != nArray {
		return nil, fmt.Errorf("config/horizon.php: the file returns %s, not an array", f.ret.src)
	}
	if env == nil {
		env = func(string) (string, bool) { return "", false }
	}
	ev := &phpEval{imports: f.imports, env: env}
	appName := hzValue{kind: vString, s: "laravel"}
	if raw, ok := env("APP_NAME"); ok {
		appName = envToValue(phpEnv(raw))
	}
	h := HorizonDefaults(appName.String())
	for _, s := range f.skipped {
		h.Unevaluated = append(h.Unevaluated, HorizonUnevaluated{Key: "(file)", Expr: s,
			Reason: "a statement before return was skipped"})
	}
	miss := func(key string, n *hzNode, reason string) {
		h.Unevaluated = append(h.Unevaluated, HorizonUnevaluated{Key: key, Expr: n.src, Reason: reason})
	}
	for _, e := range f.ret.entries {
		if e.key == nil {
			continue
		}
		k, err := ev.eval(e.key)
		if err != nil {
			miss("(key)", e.key, err.Error())
			continue
		}
		switch key := k.String(); key {
		case "prefix", "use":
			v, err := ev.eval(e.value)
			if err != nil {
				miss(key, e.value, err.Error())
				continue
			}
			if key == "prefix" {
				h.Prefix = v.String()
			} else {
				h.Use = v.String()
			}
		case "trim":
			h.Trim = rdb.HorizonTrim{}
			ev.each(e.value, "trim", miss, func(key string, n *hzNode) {
				v, err := ev.eval(n)
				if err != nil {
					miss("trim."+key, n, err.Error())
					return
				}
				if v.kind == vNull {
					return // null: as if not set
				}
				minutes, ok := v.Int()
				if !ok {
					miss("trim."+key, n, fmt.Sprintf("not a number of minutes: %s", v.describe()))
					return
				}
				switch key {
				case "recent":
					h.Trim.Recent = minutes
				case "pending":
					h.Trim.Pending = minutes
				case "completed":
					h.Trim.Completed = minutes
				case "recent_failed":
					h.Trim.RecentFailed = minutes
				case "failed":
					h.Trim.Failed = minutes
				case "monitored":
					h.Trim.Monitored = minutes
				}
			})
		case "silenced":
			h.Silenced = nil
			ev.each(e.value, "silenced", miss, func(key string, n *hzNode) {
				v, err := ev.eval(n)
				if err != nil {
					miss("silenced."+key, n, err.Error())
					return
				}
				h.Silenced = append(h.Silenced, v.String())
			})
		case "environments":
			h.Environments = nil
			ev.each(e.value, "environments", miss, func(key string, _ *hzNode) {
				h.Environments = append(h.Environments, key)
			})
		}
	}
	return h, nil
}

// each calls fn with the key (evaluated) and value node of each entry of an array
// literal; anything else is reported.
func (ev *phpEval) each(n *hzNode, what string, miss func(string, *hzNode, string), fn func(string, *hzNode)) {
	if n.kind != nArray {
		miss(what, n, "not an array literal")
		return
	}
	next := 0
	for _, e := range n.entries {
		key := strconv.Itoa(next)
		if e.key != nil {
			k, err := ev.eval(e.key)
			if err != nil {
				miss(what+".(key)", e.key, err.Error())
				continue
			}
			key = k.String()
			if i, err := strconv.Atoi(key); err == nil && strconv.Itoa(i) == key && i >= next {
				next = i + 1
			}
		} else {
			next++
		}
		fn(key, e.value)
	}
}

// hzValue is an evaluated PHP value: null, bool, int, float, string, or an array
// (kept only as a marker: config values laraq reads are scalars).
type hzValue struct {
	kind valueKind
	s    string
	i    int64
	f    float64
	b    bool
}

type valueKind uint8

const (
	vNull valueKind = iota
	vBool
	vInt
	vFloat
	vString
	vArray
)

// String is PHP's string conversion.
func (v hzValue) String() string {
	switch v.kind {
	case vBool:
		if v.b {
			return "1"
		}
		return ""
	case vInt:
		return strconv.FormatInt(v.i, 10)
	case vFloat:
		return php.FloatString(v.f)
	case vString:
		return v.s
	case vArray:
		return "Array"
	}
	return ""
}

func (v hzValue) truthy() bool {
	switch v.kind {
	case vBool:
		return v.b
	case vInt:
		return v.i != 0
	case vFloat:
		return v.f != 0
	case vString:
		return v.s != "" && v.s != "0"
	case vArray:
		return true
	}
	return false
}

// number converts for arithmetic: ints stay ints, numeric strings become numbers.
func (v hzValue) number() (hzValue, bool) {
	switch v.kind {
	case vInt, vFloat:
		return v, true
	case vNull:
		return hzValue{kind: vInt}, true
	case vBool:
		if v.b {
			return hzValue{kind: vInt, i: 1}, true
		}
		return hzValue{kind: vInt}, true
	case vString:
		s := strings.TrimSpace(v.s)
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return hzValue{kind: vInt, i: i}, true
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !strings.ContainsAny(s, "xXpP_") {
			return hzValue{kind: vFloat, f: f}, true
		}
	}
	return hzValue{}, false
}

// Int is a number of minutes: an int, a float with an integral value, or a numeric string.
func (v hzValue) Int() (int, bool) {
	n, ok := v.number()
	if !ok || v.kind == vNull || v.kind == vBool {
		return 0, false
	}
	if n.kind == vFloat {
		if n.f != math.Trunc(n.f) || math.Abs(n.f) > 1<<31 {
			return 0, false
		}
		return int(n.f), true
	}
	if n.i > 1<<31 || n.i < -(1<<31) {
		return 0, false
	}
	return int(n.i), true
}

func (v hzValue) describe() string {
	switch v.kind {
	case vNull:
		return "null"
	case vBool:
		return strconv.FormatBool(v.b)
	case vString:
		return strconv.Quote(v.s)
	case vArray:
		return "an array"
	}
	return v.String()
}

func envToValue(e envValue) hzValue {
	switch {
	case e.null:
		return hzValue{kind: vNull}
	case e.bool:
		return hzValue{kind: vBool, b: e.str == "1"}
	}
	return hzValue{kind: vString, s: e.str}
}

type phpEval struct {
	imports map[string]string
	env     func(string) (string, bool)
}

// className resolves a class name as PHP does in a file without a namespace.
func (ev *phpEval) className(name string) string {
	if strings.HasPrefix(name, `\`) {
		return name[1:]
	}
	first, rest, qualified := strings.Cut(name, `\`)
	if fq, ok := ev.imports[strings.ToLower(first)]; ok {
		if qualified {
			return fq + `\` + rest
		}
		return fq
	}
	return name
}

func (ev *phpEval) eval(n *hzNode) (hzValue, error) {
	switch n.kind {
	case nString:
		return hzValue{kind: vString, s: n.str}, nil
	case nNumber:
		return parseNumber(n.str)
	case nConst:
		switch strings.ToLower(n.str) {
		case "true", `\true`:
			return hzValue{kind: vBool, b: true}, nil
		case "false", `\false`:
			return hzValue{kind: vBool}, nil
		case "null", `\null`:
			return hzValue{kind: vNull}, nil
		}
		return hzValue{}, fmt.Errorf("the constant %s is not known", n.str)
	case nArray:
		return hzValue{kind: vArray}, nil
	case nClassConst:
		return hzValue{kind: vString, s: ev.className(n.str)}, nil
	case nCall:
		return ev.call(n)
	case nStaticCall:
		return ev.staticCall(n)
	case nCast:
		x, err := ev.eval(n.args[0])
		if err != nil {
			return x, err
		}
		return cast(n.str, x)
	case nUnary:
		x, err := ev.eval(n.args[0])
		if err != nil {
			return x, err
		}
		if n.str == "!" {
			return hzValue{kind: vBool, b: !x.truthy()}, nil
		}
		num, ok := x.number()
		if !ok {
			return hzValue{}, fmt.Errorf("unary %s of %s", n.str, x.describe())
		}
		if n.str == "-" {
			if num.kind == vInt && num.i != math.MinInt64 {
				num.i = -num.i
			} else {
				num = hzValue{kind: vFloat, f: -toFloat(num)}
			}
		}
		return num, nil
	case nBinary:
		return ev.binary(n)
	case nTernary:
		c, err := ev.eval(n.args[0])
		if err != nil {
			return c, err
		}
		if c.truthy() {
			if n.args[1] == nil {
				return c, nil
			}
			return ev.eval(n.args[1])
		}
		return ev.eval(n.args[2])
	case nInterpolate:
		return hzValue{}, fmt.Errorf("a string with interpolated variables")
	case nVariable:
		return hzValue{}, fmt.Errorf("the variable %s", n.str)
	}
	return hzValue{}, fmt.Errorf("not understood")
}

func (ev *phpEval) call(n *hzNode) (hzValue, error) {
	if strings.ToLower(strings.TrimPrefix(n.str, `\`)) != "env" {
		return hzValue{}, fmt.Errorf("the function %s() is not evaluated", n.str)
	}
	if len(n.args) < 1 || len(n.args) > 2 {
		return hzValue{}, fmt.Errorf("env() with %d arguments", len(n.args))
	}
	name, err := ev.eval(n.args[0])
	if err != nil {
		return name, err
	}
	if raw, ok := ev.env(name.String()); ok {
		return envToValue(phpEnv(raw)), nil
	}
	if len(n.args) == 2 {
		return ev.eval(n.args[1])
	}
	return hzValue{kind: vNull}, nil
}

func (ev *phpEval) staticCall(n *hzNode) (hzValue, error) {
	class, method, _ := strings.Cut(n.str, "::")
	fq := ev.className(class)
	if (fq != `Illuminate\Support\Str` && fq != "Str") || !strings.EqualFold(method, "slug") {
		return hzValue{}, fmt.Errorf("%s::%s() is not evaluated", fq, method)
	}
	if len(n.args) < 1 || len(n.args) > 3 {
		return hzValue{}, fmt.Errorf("Str::slug() with %d arguments", len(n.args))
	}
	title, err := ev.eval(n.args[0])
	if err != nil {
		return title, err
	}
	sep := "-"
	if len(n.args) >= 2 {
		s, err := ev.eval(n.args[1])
		if err != nil {
			return s, err
		}
		sep = s.String()
	}
	if len(n.args) == 3 {
		if l, err := ev.eval(n.args[2]); err != nil || l.String() != "en" {
			return hzValue{}, fmt.Errorf("Str::slug() is evaluated for the language 'en' only")
		}
	}
	if sep != "-" && sep != "_" {
		return hzValue{}, fmt.Errorf("Str::slug() is evaluated with the separators '-' and '_' only, not %q", sep)
	}
	return hzValue{kind: vString, s: php.Slug(title.String(), sep)}, nil
}

func (ev *phpEval) binary(n *hzNode) (hzValue, error) {
	l, err := ev.eval(n.args[0])
	if err != nil {
		return l, err
	}
	if n.str == "??" {
		if l.kind != vNull {
			return l, nil
		}
		return ev.eval(n.args[1])
	}
	r, err := ev.eval(n.args[1])
	if err != nil {
		return r, err
	}
	if n.str == "." {
		return hzValue{kind: vString, s: l.String() + r.String()}, nil
	}
	a, aok := l.number()
	b, bok := r.number()
	if !aok || !bok {
		return hzValue{}, fmt.Errorf("%s %s %s", l.describe(), n.str, r.describe())
	}
	if a.kind == vInt && b.kind == vInt {
		switch n.str {
		case "+":
			if s := a.i + b.i; (s > a.i) == (b.i > 0) {
				return hzValue{kind: vInt, i: s}, nil
			}
		case "-":
			if d := a.i - b.i; (d < a.i) == (b.i > 0) {
				return hzValue{kind: vInt, i: d}, nil
			}
		case "*":
			if a.i == 0 || (a.i*b.i)/a.i == b.i && !(a.i == -1 && b.i == math.MinInt64) {
				return hzValue{kind: vInt, i: a.i * b.i}, nil
			}
		case "%":
			if b.i == 0 {
				return hzValue{}, fmt.Errorf("modulo by zero")
			}
			return hzValue{kind: vInt, i: a.i % b.i}, nil
		case "/":
			if b.i != 0 && a.i%b.i == 0 {
				return hzValue{kind: vInt, i: a.i / b.i}, nil
			}
		}
	}
	x, y := toFloat(a), toFloat(b)
	switch n.str {
	case "+":
		return hzValue{kind: vFloat, f: x + y}, nil
	case "-":
		return hzValue{kind: vFloat, f: x - y}, nil
	case "*":
		return hzValue{kind: vFloat, f: x * y}, nil
	case "/":
		if y == 0 {
			return hzValue{}, fmt.Errorf("division by zero")
		}
		return hzValue{kind: vFloat, f: x / y}, nil
	}
	return hzValue{}, fmt.Errorf("the operator %s", n.str)
}

func toFloat(v hzValue) float64 {
	if v.kind == vInt {
		return float64(v.i)
	}
	return v.f
}

func cast(to string, x hzValue) (hzValue, error) {
	switch to {
	case "string":
		return hzValue{kind: vString, s: x.String()}, nil
	case "bool":
		return hzValue{kind: vBool, b: x.truthy()}, nil
	case "int":
		if x.kind == vString {
			// (int) "60 minutes" is 60: the leading number counts.
			s := strings.TrimLeft(x.s, " \t\n\r\v\f")
			end := 0
			for end < len(s) && (s[end] >= '0' && s[end] <= '9' || end == 0 && (s[end] == '-' || s[end] == '+')) {
				end++
			}
			i, _ := strconv.ParseInt(s[:end], 10, 64)
			return hzValue{kind: vInt, i: i}, nil
		}
		n, ok := x.number()
		if !ok {
			return hzValue{}, fmt.Errorf("(int) of %s", x.describe())
		}
		if n.kind == vFloat {
			if math.IsNaN(n.f) || math.IsInf(n.f, 0) || math.Abs(n.f) >= 1<<63 {
				return hzValue{kind: vInt}, nil
			}
			return hzValue{kind: vInt, i: int64(n.f)}, nil
		}
		return n, nil
	case "float":
		n, ok := x.number()
		if !ok {
			return hzValue{kind: vFloat}, nil
		}
		return hzValue{kind: vFloat, f: toFloat(n)}, nil
	}
	return hzValue{}, fmt.Errorf("the cast (%s)", to)
}

// parseNumber reads a PHP integer or float literal.
func parseNumber(lit string) (hzValue, error) {
	s := strings.ReplaceAll(lit, "_", "")
	lower := strings.ToLower(s)
	base := 10
	digits := s
	switch {
	case strings.HasPrefix(lower, "0x"):
		base, digits = 16, s[2:]
	case strings.HasPrefix(lower, "0b"):
		base, digits = 2, s[2:]
	case strings.HasPrefix(lower, "0o"):
		base, digits = 8, s[2:]
	case len(s) > 1 && s[0] == '0' && !strings.ContainsAny(s, ".eE"):
		base, digits = 8, s[1:]
	}
	if !strings.ContainsAny(lower, ".e") || base != 10 {
		if i, err := strconv.ParseInt(digits, base, 64); err == nil {
			return hzValue{kind: vInt, i: i}, nil
		}
		if u, err := strconv.ParseUint(digits, base, 64); err == nil {
			return hzValue{kind: vFloat, f: float64(u)}, nil // beyond PHP_INT_MAX: a float
		}
		if base != 10 {
			return hzValue{}, fmt.Errorf("the number %s", lit)
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !strings.Contains(err.Error(), "range") {
		return hzValue{}, fmt.Errorf("the number %s", lit)
	}
	return hzValue{kind: vFloat, f: f}, nil
}
