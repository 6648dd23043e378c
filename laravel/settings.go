package laravel

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The precedence of one setting, highest first, as Laravel's own loading gives it:
//
//  1. LARAQ_<VAR> from App.Flags, then the process environment, for each of the
//     setting's variables (taken literally);
//  2. the application's configuration: bootstrap/cache/config.php when it exists (then
//     nothing else, as in PHP), else config/<file>.php, else (11.x+) the framework's own
//     config file for what the application leaves out. Its expression is evaluated, and
//     an env() in it reads the process environment, then the .env file: so a variable in
//     .env counts exactly when the config file reads it, and a literal beats it;
//  3. what Laravel's code uses for a key the configuration leaves out (retry_after 60…);
//  4. when there are no config files, or an expression laraq cannot evaluate (a warning
//     names the file, the key and the expression): the same key of the skeleton of the
//     application's release, evaluated against the environment and .env the same way.

// setting is one configuration key laraq reads.
type setting struct {
	name string   // the key of Config.Origins
	file string   // config/<file>.php
	path []string // the keys within it
	// vars are the application's variables the skeleton reads for the key. LARAQ_<var>
	// overrides the setting (unless noOverride: the caller applies it), and a var set in
	// the environment or .env that the configuration does not read is warned about.
	vars       []string
	noOverride bool
	// absent is the PHP expression Laravel's code falls back to when the configuration
	// leaves the key out ("" : null).
	absent string
}

func (s setting) key() string { return s.file + "." + strings.Join(s.path, ".") }

// value is a resolved setting.
type value struct {
	v      phpValue
	origin Origin
	ok     bool // false: nothing says anything (an unreadable key without skeleton default)
}

func (v value) str() string { return v.v.str() }

// loader resolves the settings of one Load.
type loader struct {
	r      *resolver
	c      *Config
	layers *configLayers
	base   string // database_path()'s application root: App.Root, or the .env's directory
	// unreadable are the "file: why" of unknown lookups already warned about.
	unreadable map[string]bool
}

func (l *loader) evaluator() *evaluator {
	return &evaluator{
		root: l.base,
		env: func(name string) (envValue, Origin, bool) {
			if v, origin, ok := l.r.override(name); ok {
				return envValue{set: true, str: v}, origin, true
			}
			v, origin := l.r.env(name)
			return v, origin, v.set
		},
	}
}

// value resolves s (and records its origin under s.name).
func (l *loader) value(s setting) value {
	if !s.noOverride {
		for _, name := range s.vars {
			if v, origin, ok := l.r.override(name); ok {
				l.r.origins[s.name] = origin
				return value{v: phpStr(v), origin: origin, ok: true}
			}
		}
	}
	v := l.fromConfig(s)
	l.r.origins[s.name] = v.origin
	return v
}

func (l *loader) fromConfig(s setting) value {
	lk := l.layers.get(s.file, s.path...)
	switch lk.status {
	case absent:
		v := value{origin: fileOrigin(lk.file, 0), ok: true}
		if s.absent != "" {
			toks, _ := tokenizePHP("<?php " + s.absent)
			r, err := l.evaluator().eval(parseExpr(toks))
			if err == nil {
				v.v = r.v
			}
		}
		return v
	case unknown:
		// Everything under an unreadable level is unknown for the same reason: say it once.
		seen := lk.file + ": " + lk.why
		if l.unreadable[seen] {
			return l.skeletonValue(s)
		}
		if l.unreadable == nil {
			l.unreadable = map[string]bool{}
		}
		l.unreadable[seen] = true
		return l.fallback(s, fmt.Sprintf("%s: %s cannot be read (%s)", lk.file, s.key(), lk.why))
	}
	if lk.node == nil { // laraq's skeleton does not have the key either
		return value{}
	}
	where := fmt.Sprintf("%s:%d", lk.file, lk.node.line)
	if lk.status == builtin {
		where = fmt.Sprintf("the %s skeleton's %s", l.layers.skelEra, lk.file)
		if l.layers.app != nil {
			where = fmt.Sprintf("the %s framework's %s", l.layers.baseEra, lk.file)
		}
	}
	if lk.node.isArray {
		return l.fallback(s, fmt.Sprintf("%s: %s is an array, not a value", where, s.key()))
	}
	ev := l.evaluator()
	r, err := ev.eval(parseExpr(lk.node.expr))
	if err != nil {
		if lk.status == builtin {
			return value{} // database_path() of an application laraq knows no root of
		}
		return l.fallback(s, fmt.Sprintf("%s: %s is `%s`, which laraq cannot evaluate (%v)", where, s.key(), lk.node.source(), err))
	}
	for _, note := range ev.lossy {
		l.c.warn("%s: %s: %s", where, s.key(), note)
	}
	v := value{v: r.v, origin: r.origin, ok: true}
	if r.from == "" {
		v.origin = Origin{}
		if lk.status == found {
			v.origin = fileOrigin(lk.file, lk.node.line)
		}
	}
	l.checkUnread(s, ev.reads, r.v, where, lk.status == builtin)
	return v
}

// fileOrigin is the origin of a value written in a config file: the application's
// (ConfigFile), or the framework's own under vendor/ (Framework).
func fileOrigin(file string, line int) Origin {
	if strings.HasPrefix(file, "vendor/") {
		return Origin{Kind: Framework, Name: file, Line: line}
	}
	return Origin{Kind: ConfigFile, Name: file, Line: line}
}

// chosen reports whether the application itself chose a setting: its environment, .env
// or config files, not a default of the skeleton or the framework.
func chosen(o Origin) bool { return o.Named() && o.Kind != Framework }

// fallback evaluates the skeleton's expression for s after a warning saying why the
// application's could not be used.
func (l *loader) fallback(s setting, why string) value {
	v := l.skeletonValue(s)
	hint := ""
	if len(s.vars) > 0 {
		hint = fmt.Sprintf("; set %s%s to the value PHP uses", EnvPrefix, s.vars[0])
	}
	if v.ok {
		l.c.warn("%s; laraq uses the %s skeleton's value %s instead%s", why, l.layers.skelEra, v.v.php(), hint)
	} else {
		l.c.warn("%s; laraq has no value for it%s", why, hint)
	}
	return v
}

// skeletonValue evaluates s in the skeleton laraq assumes, whatever the application's
// files say.
func (l *loader) skeletonValue(s setting) value {
	lk := l.layers.fromSkeleton(l.layers.skeleton, s.file, s.path)
	if lk.node == nil || lk.node.isArray {
		return value{}
	}
	r, err := l.evaluator().eval(parseExpr(lk.node.expr))
	if err != nil {
		return value{}
	}
	v := value{v: r.v, origin: r.origin, ok: true}
	if r.from == "" {
		v.origin = Origin{}
	}
	return v
}

// checkUnread warns about a variable of s that is set but that the configuration does
// not read, when its value differs from what the configuration gives: PHP ignores it.
func (l *loader) checkUnread(s setting, reads []string, got phpValue, where string, assumed bool) {
	for _, name := range s.vars {
		if slices.Contains(reads, name) {
			continue
		}
		v, origin := l.r.env(name)
		if !v.set || v.null && got.kind == phpNull || !v.null && v.str == got.str() {
			continue
		}
		if assumed {
			l.c.warn("%s is set (%s), but %s does not read it: laraq uses %s as %s (it has not read the application's own config files: give its root)",
				name, origin, where, got.php(), s.key())
			continue
		}
		l.c.warn("%s is set (%s), but %s does not read it: %s is %s there, and PHP uses that", name, origin, where, s.key(), got.php())
	}
}

// str resolves a string setting; null gives def.
func (l *loader) str(s setting, def string) string {
	v := l.value(s)
	if !v.ok || v.v.kind == phpNull {
		return def
	}
	return v.str()
}

// int resolves an integer setting; null or absent gives def. Text that is not an integer
// is an error naming where it came from (PHP would hand it to the Redis client or the
// worker as is); an (int) cast in the configuration converts as PHP does.
func (l *loader) int(s setting, def int) (int, error) { return l.intOf(s, l.value(s), def) }

// intOf is int for a value already resolved.
func (l *loader) intOf(s setting, v value, def int) (int, error) {
	if !v.ok || v.v.kind == phpNull {
		return def, nil
	}
	if v.v.kind == phpInt {
		return int(v.v.i), nil
	}
	t := strings.TrimSpace(v.str())
	if t == "" {
		return def, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil {
		name := s.key()
		if len(s.vars) > 0 {
			name = s.vars[0]
		}
		return 0, fmt.Errorf("config: %s (%s): want an integer, got %q", name, v.origin, v.str())
	}
	return n, nil
}
