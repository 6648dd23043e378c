package worker

import (
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/phpclass"
	"github.com/laraq/laraq/phpser"
)

// A command that carries a property no field of its Go type takes decodes all the same
// (phpser drops what no field takes), so a misspelt php tag, a property the type lacks
// or a class changed in PHP since would go unnoticed: the handler sees a zero value.
// Without the classes' facts to check the types at start (Config.Classes), the run stage
// looks, after the handler decoded the command, for the properties no field takes, logs
// each class and property once and emits EventUnknownProperties for the metrics. The
// names come from outside input, so the set logged is bounded.

const (
	// maxUnknownLogged bounds the class and property pairs logged.
	maxUnknownLogged = 1000
	// maxUnknownNames bounds the names an event carries, and maxNameLen each name.
	maxUnknownNames = 16
	maxNameLen      = 128
)

// properties finds the properties of a command its Go type does not take.
type properties struct {
	base
	jobs  *job.Jobs
	types sync.Map // reflect.Type → *fieldSet

	mu     sync.Mutex
	logged map[[2]string]bool // class, property
	full   bool
}

// fieldSet is what a Go type takes: the tagged names exactly, the untagged ones in any
// case (phpser's rule), everything when it has a rest field, and what it leaves unmapped
// on purpose (phpclass.Unmapper).
type fieldSet struct {
	exact map[string]bool
	fold  map[string]bool // lower-cased names of untagged fields
	all   bool
}

func (f *fieldSet) takes(name string) bool {
	return f.all || f.exact[name] || f.fold[strings.ToLower(name)]
}

func (p *properties) fieldsOf(t reflect.Type) *fieldSet {
	if f, ok := p.types.Load(t); ok {
		return f.(*fieldSet)
	}
	f := &fieldSet{exact: map[string]bool{}, fold: map[string]bool{}}
	fields, err := phpser.Fields(t)
	if err != nil {
		f.all = true // the type does not decode at all: the handler's error says so
	}
	for _, fd := range fields {
		switch {
		case fd.Rest:
			f.all = true
		case fd.Tagged:
			f.exact[fd.Name] = true
		default:
			f.exact[fd.Name] = true
			f.fold[strings.ToLower(fd.Name)] = true
		}
	}
	var u phpclass.Unmapper
	switch {
	case t.Implements(reflect.TypeFor[phpclass.Unmapper]()):
		u, _ = reflect.Zero(t).Interface().(phpclass.Unmapper)
	case reflect.PointerTo(t).Implements(reflect.TypeFor[phpclass.Unmapper]()):
		u, _ = reflect.New(t).Interface().(phpclass.Unmapper)
	}
	if u != nil {
		for _, n := range u.PHPUnmapped() {
			f.exact[n] = true
		}
	}
	p.types.Store(t, f)
	return f
}

// check looks at the command the handler decoded, once it returned.
func (p *properties) check(a *attempt) {
	if p.cfg.Classes != nil || a.job == nil {
		return
	}
	t := job.CommandType(p.jobs, a.job.Class)
	cmd := job.DecodedCommand(a.job).Deref()
	if t == nil || cmd == nil || cmd.Kind() != phpser.KindObject {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	fs := p.fieldsOf(t)
	if fs.all {
		return
	}
	var names []string
	count := 0
	for _, e := range cmd.Entries() {
		var name string
		if e.Key.IsInt() {
			name = strconv.FormatInt(e.Key.Int(), 10)
		} else {
			name, _, _ = phpser.UnmangleName(e.Key.Str())
		}
		if fs.takes(name) {
			continue
		}
		count++
		name = shortName(name)
		if len(names) < maxUnknownNames {
			names = append(names, name)
		}
		p.logOnce(a, t, name)
	}
	if count > 0 {
		p.emit(job.Event{Kind: job.EventUnknownProperties, Queue: a.queue, Job: a.job, Count: count, Properties: names})
	}
}

// logOnce logs a class's property no field takes the first time it is seen.
func (p *properties) logOnce(a *attempt, t reflect.Type, name string) {
	key := [2]string{shortName(a.job.Class), name}
	p.mu.Lock()
	if p.logged == nil {
		p.logged = map[[2]string]bool{}
	}
	quiet := p.logged[key] || p.full
	fills := !quiet && len(p.logged) >= maxUnknownLogged
	switch {
	case fills:
		p.full = true
	case !quiet:
		p.logged[key] = true
	}
	p.mu.Unlock()
	switch {
	case quiet:
	case fills:
		p.log.Warn("more properties no field of their Go type takes than are worth logging; the metrics go on counting them", "logged", maxUnknownLogged)
	default:
		p.log.Warn("the command carries a property no field of its Go type takes: the handler does not see it (a misspelt php tag, a property the type lacks, or the PHP class changed; 'laraq classes' and WorkerConfig.Classes check the types at start)",
			"class", a.job.Class, "property", name, "type", t.String(), "id", a.job.ID)
	}
}

// shortName bounds a name from outside input, on a rune boundary.
func shortName(s string) string {
	if len(s) <= maxNameLen {
		return s
	}
	i := maxNameLen
	for i > 0 && !isRuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
