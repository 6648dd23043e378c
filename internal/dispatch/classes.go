package dispatch

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/phpclass"
	"github.com/laraq/laraq/phpser"
)

// A Dispatcher given the job classes' facts (Config.Classes, laraq.WithClasses) knows
// each class as PHP's reflection does, so that what it queues is what PHP queues:
//
//   - a Go type is compared with its class once (phpclass.Check) and refused on a
//     mistake (a property no field takes, a tag no property has, a visibility or default
//     that differs, a unique or encrypted class the type does not say so), as a worker
//     refuses to start with it;
//   - a job given as a *phpser.Value is the object PHP holds for the class
//     (Class.Object: every property serialize() writes, at its default unless given, the
//     Queueable properties only where the class uses the trait), from which the metadata
//     is read, and is written as serialize() writes it (Class.Written: 9.4+
//     SerializesModels leaves out what still holds its default); it is encrypted when the
//     class implements ShouldBeEncrypted, 13.x reads the class's queue attributes, and a
//     ShouldBeUnique class takes its lock (classUnique).
//
// What PHP computes in methods (tries(), backoff(), displayName(), ...) stays PHP code:
// the payload reads the properties only. uniqueId() and uniqueFor() name the lock, so
// for them the caller says what they return (Options.UniqueID, UniqueFor), or the
// dispatch is refused.

// classCheck is one Go type checked against one class.
type classCheck struct {
	class string
	t     reflect.Type
}

// CheckTypes compares Go types with their classes (types maps the class to the type, as
// laraq.Jobs declares them), remembering each result: laraq.NewDispatcher refuses to
// build a Dispatcher for types that contradict their classes. Without Classes it does
// nothing.
func (p *Dispatcher) CheckTypes(types map[string]reflect.Type) error {
	if p.cfg.Classes == nil {
		return nil
	}
	classes := make([]string, 0, len(types))
	for c := range types {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	var all []phpclass.Problem
	for _, c := range classes {
		var ce *phpclass.CheckError
		if err := p.checkType(c, types[c]); errors.As(err, &ce) {
			all = append(all, ce.Problems...)
		}
	}
	if len(all) > 0 {
		return fmt.Errorf("laraq: %w", &phpclass.CheckError{Problems: all})
	}
	return nil
}

// checkJob checks a Go job's type against its class, once per type; nil without
// Classes, and for a *phpser.Value or a type without PHPClass (which goCommand refuses).
func (p *Dispatcher) checkJob(v any) error {
	if p.cfg.Classes == nil {
		return nil
	}
	c, ok := v.(job.Command)
	if !ok {
		return nil
	}
	if _, isValue := v.(*phpser.Value); isValue {
		return nil
	}
	if err := p.checkType(c.PHPClass(), reflect.TypeOf(v)); err != nil {
		return fmt.Errorf("laraq: %w", err)
	}
	return nil
}

func (p *Dispatcher) checkType(class string, t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	key := classCheck{class, t}
	if err, ok := p.checked.Load(key); ok {
		e, _ := err.(error)
		return e
	}
	err := phpclass.CheckTypes(p.cfg.Classes, map[string]reflect.Type{class: t})
	p.checked.Store(key, err)
	return err
}

// classFacts finds the class of a job given as a PHP object in Classes: an error names
// a class the facts lack, whose visibility and defaults are then unknown.
func (p *Dispatcher) classFacts(v *phpser.Value) (*phpclass.Class, error) {
	if p.cfg.Classes == nil || v == nil || v.Kind() != phpser.KindObject {
		return nil, nil
	}
	c := p.cfg.Classes.Class(v.Class())
	if c == nil {
		return nil, fmt.Errorf("the manifest has no class %s, so its visibility and defaults are unknown (run 'laraq classes' for it, or dispatch it without the class facts)", v.Class())
	}
	return c, nil
}

// classCommand is a job given as a PHP object of a class Classes knows: the object PHP
// holds, the properties in set changed where the class has them (onQueue() and delay()
// exist only on classes that use Queueable), and what serialize() writes of it.
func (p *Dispatcher) classCommand(v *phpser.Value, set map[string]*phpser.Value) (*command, error) {
	if _, err := valueCommand(v, nil); err != nil {
		return nil, err
	}
	c, err := p.classFacts(v)
	if err != nil {
		return nil, err
	}
	live, err := c.Object(v.Entries())
	if err != nil {
		return nil, err
	}
	for name, x := range set {
		if pr := c.Property(name); pr != nil && !pr.Unwritten {
			live = setProp(live, name, x)
		}
	}
	return &command{class: c.Name, live: live, out: c.Written(live, p.release().AtLeast(9, 4, 0)), methods: classMethods(c)}, nil
}

// classMethods are what the class declares beside its properties, as jobMethods: the
// defaults of its properties and the values of its queue attributes.
// extractAttributeValue reads the attribute instance's first property: the argument of
// a one-argument attribute, true for one without (FailOnTimeout), and for Backoff(...),
// which keeps one value as it is and several as a list, that.
func classMethods(c *phpclass.Class) jobMethods {
	m := jobMethods{defaults: map[string]*phpser.Value{}, attrs: map[string]*phpser.Value{}}
	for i := range c.Properties {
		pr := &c.Properties[i]
		if d := pr.DefaultValue(); d != nil && pr.Vis() == phpser.Public && !pr.Unwritten {
			m.defaults[pr.Name] = d
		}
	}
	for _, a := range c.Attributes {
		name, ok := phpclass.PayloadAttributes[a.Name]
		if !ok {
			continue
		}
		args := make([]*phpser.Value, 0, len(a.Arguments))
		for _, arg := range a.Arguments {
			v, err := phpser.DecodeString(arg.Value)
			if err != nil { // PHP could not serialize it (Error): the attribute is unknown
				args = nil
				break
			}
			args = append(args, v)
		}
		switch {
		case len(a.Arguments) == 0:
			m.attrs[name] = phpser.Bool(true)
		case args == nil:
		case len(args) == 1:
			m.attrs[name] = args[0]
		case name == "backoff":
			m.attrs[name] = phpser.List(args...)
		default:
			m.attrs[name] = args[0]
		}
	}
	return m
}

// classUnique is the lock of a job given as a PHP object of a ShouldBeUnique class, as
// UniqueLock reads the object PHP holds: the id is uniqueId() when the class has that
// method (PHP code: the caller gives what it returns, Options.UniqueID), else its
// uniqueId property (UniqueIDProperty); uniqueFor is uniqueFor() (Options.UniqueFor;
// 8.x never calls it), else `$job->uniqueFor ?? 0`, on 13.x the #[UniqueFor] attribute
// unless the property was set away from its default. A class with displayName() names its lock with what
// it returns on 12.41+, which laraq cannot run: refused there.
func (p *Dispatcher) classUnique(v *phpser.Value, o *Options) (*uniqueSpec, error) {
	c, err := p.classFacts(v)
	if err != nil {
		return nil, fmt.Errorf("laraq: %w", err)
	}
	if c == nil {
		return nil, nil
	}
	if !c.Unique() {
		if o.UniqueID != nil || o.UniqueFor != nil {
			return nil, fmt.Errorf("laraq: UniqueID or UniqueFor given for %s, which does not implement ShouldBeUnique", c.Name)
		}
		return nil, nil
	}
	live, err := c.Object(v.Entries())
	if err != nil {
		return nil, fmt.Errorf("laraq: %w", err)
	}
	s := &uniqueSpec{class: c.Name}
	rel := p.release()
	if c.Method("displayName") != nil {
		s.hasDisplay = true
		if rel.AtLeast(12, 41, 0) {
			return nil, fmt.Errorf("laraq: %s has a displayName() method, whose answer names its unique lock on Laravel 12.41+ and which laraq cannot run: dispatch it as a Go type implementing DisplayName and UniqueJob", c.Name)
		}
	}
	switch {
	case c.Method("uniqueId") != nil && o.UniqueID == nil:
		return nil, fmt.Errorf("laraq: %s's unique lock is named by its uniqueId() method, PHP code laraq cannot run: give the id it returns (laraq.UniqueID; laraq dispatch --unique-id)", c.Name)
	case c.Method("uniqueId") != nil:
		s.id = *o.UniqueID
	case o.UniqueID != nil:
		return nil, fmt.Errorf("laraq: UniqueID given for %s, which has no uniqueId() method: its lock is named by its uniqueId property", c.Name)
	default:
		if s.id, err = UniqueIDProperty(c, live); err != nil {
			return nil, fmt.Errorf("laraq: %w", err)
		}
	}
	// 8.x reads the property alone (`$job->uniqueFor ?? 0`); 9.x calls the method.
	forMethod := c.Method("uniqueFor") != nil && rel.AtLeast(9, 0, 0)
	switch {
	case forMethod && o.UniqueFor == nil:
		return nil, fmt.Errorf("laraq: %s's unique lock lasts what its uniqueFor() method returns, PHP code laraq cannot run: give it (laraq.UniqueFor; laraq dispatch --unique-for)", c.Name)
	case forMethod:
		s.uniqueFor = *o.UniqueFor
	case o.UniqueFor != nil && c.Method("uniqueFor") != nil:
		return nil, fmt.Errorf("laraq: UniqueFor given for %s, whose uniqueFor() method Laravel %s does not call (8.x reads the uniqueFor property)", c.Name, rel)
	case o.UniqueFor != nil:
		return nil, fmt.Errorf("laraq: UniqueFor given for %s, which has no uniqueFor() method: its lock lasts its uniqueFor property", c.Name)
	default:
		secs := classMethods(c).read(live, "uniqueFor", rel.AtLeast(13, 0, 0))
		if secs != nil {
			n, ok := lockSeconds(secs)
			if !ok {
				return nil, fmt.Errorf("laraq: %s: uniqueFor is a PHP %s, not a number of seconds", c.Name, secs.Kind())
			}
			s.uniqueFor = time.Duration(n) * time.Second
		}
	}
	return s, nil
}

// UniqueIDProperty is `$job->uniqueId ?? ”` (UniqueLock::getKey) of obj, an object of
// class c: its public uniqueId property as a PHP string, read at the class's default when
// obj does not hold it (9.4+ SerializesModels leaves a property at its default out).
func UniqueIDProperty(c *phpclass.Class, obj *phpser.Value) (string, error) {
	v, ok := obj.Visible("uniqueId")
	if !ok && obj.Kind() == phpser.KindObject {
		if _, held := phpser.PropIndex(obj.Entries(), "uniqueId"); !held {
			if pr := c.Property("uniqueId"); pr != nil && pr.Vis() == phpser.Public {
				v = pr.DefaultValue()
			}
		}
	}
	s, ok := v.StringCast()
	if !ok {
		return "", fmt.Errorf("%s: the uniqueId property is a PHP %s, which PHP cannot make a lock name of", c.Name, v.Kind())
	}
	return s, nil
}

// lockSeconds is a lock's lifetime as RedisLock takes it: an int, or what PHP's int
// conversion makes of a float, bool or numeric string.
func lockSeconds(v *phpser.Value) (int64, bool) {
	switch v = v.Deref(); v.Kind() {
	case phpser.KindInt:
		return v.Int(), true
	case phpser.KindFloat:
		return int64(v.Float()), true
	case phpser.KindBool:
		if v.Bool() {
			return 1, true
		}
		return 0, true
	case phpser.KindString:
		if php.IsNumeric(v.Str()) {
			return php.Intval(v.Str()), true
		}
	}
	return 0, false
}
