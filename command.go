package laraq

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/laraq/laraq/phpser"
)

// A command is a job object at the moment PHP queues it. Two views of it matter and
// differ from Laravel 9.4 on: the object PHP holds (every property, each at its class
// default unless set), from which Queue::createObjectPayload reads the metadata, and
// what serialize() writes of it, where SerializesModels leaves out every property still
// identical (===) to its declared default.
type command struct {
	class   string
	live    *phpser.Value // the object PHP holds
	out     *phpser.Value // what serialize() writes
	methods jobMethods
	display string // displayName(); "" for the class name
}

// busTraitNames are the properties Illuminate\Bus\Queueable declared in any release.
var busTraitNames = map[string]bool{
	"connection": true, "queue": true, "group": true, "messageGroup": true, "deduplicator": true,
	"debounceOwner": true, "uniqueLockOwner": true, "delay": true, "afterCommit": true,
	"middleware": true, "chained": true, "chainConnection": true, "chainQueue": true,
	"chainCatchCallbacks": true,
}

// busTraitDefault is the default a Bus\Queueable property has in the releases that
// declare it.
func busTraitDefault(name string) *phpser.Value {
	switch name {
	case "middleware", "chained":
		return phpser.NewArray()
	case "debounceOwner", "uniqueLockOwner":
		return phpser.String("")
	}
	return phpser.Null()
}

// busTraitProps are the properties Bus\Queueable gives a class in release r, in order,
// with their defaults (Release.QueueableProps without InteractsWithQueue's job).
func busTraitProps(r Release) []phpser.Entry {
	return r.QueueableProps()[1:]
}

// propName is the plain name of a property entry ("" for an int key).
func propName(e *phpser.Entry) string {
	if e.Key.IsInt() {
		return ""
	}
	n, _, _ := e.Key.Name()
	return n
}

// withReleaseTraits returns obj with its Bus\Queueable properties replaced by those of
// release r, in r's order, at the place of the first one obj has (or at the end): each
// takes the value of set, else obj's own (messageGroup and 12.27's group are the same
// property), else its default. A property of another release that obj holds with a
// value other than its default is an error: r's PHP class has nowhere to keep it;
// lenient keeps it after the block instead, as PHP's unserialize() keeps a property the
// class does not declare (a payload of another release).
func withReleaseTraits(obj *phpser.Value, r Release, set map[string]*phpser.Value, lenient bool) (*phpser.Value, error) {
	have := map[string]*phpser.Value{}
	at := -1
	var rest []phpser.Entry
	for _, e := range obj.Entries() {
		if n := propName(&e); busTraitNames[n] {
			if at < 0 {
				at = len(rest)
			}
			v := e.Value
			have[n] = &v
			continue
		}
		rest = append(rest, e)
	}
	if at < 0 {
		at = len(rest)
	}
	block := busTraitProps(r)
	inRelease := map[string]bool{}
	for i := range block {
		name := propName(&block[i])
		inRelease[name] = true
		alias := map[string]string{"group": "messageGroup", "messageGroup": "group"}[name]
		switch {
		case set[name] != nil:
			block[i].Value = *set[name]
		case have[name] != nil:
			block[i].Value = *have[name]
		case alias != "" && have[alias] != nil:
			block[i].Value = *have[alias]
			inRelease[alias] = true
		}
	}
	for _, e := range obj.Entries() {
		name := propName(&e)
		if !busTraitNames[name] || inRelease[name] || phpser.Identical(e.Value.Deref(), busTraitDefault(name)) {
			continue
		}
		if !lenient {
			return nil, fmt.Errorf("%s has no %s property in Laravel %s, so a value for it cannot be queued", obj.Class(), name, r)
		}
		block = append(block, e)
	}
	ents := make([]phpser.Entry, 0, len(rest)+len(block))
	ents = append(ents, rest[:at]...)
	ents = append(ents, block...)
	ents = append(ents, rest[at:]...)
	return phpser.NewObject(obj.Class(), ents...), nil
}

// modelIdentifiers returns v with every Illuminate\Contracts\Database\ModelIdentifier
// in the shape release r writes: 9.26 added collectionClass (null for a plain model or
// an Eloquent\Collection), so it is added where missing on 9.26+ and a null one removed
// before. Other values are returned as they are (shared, not copied).
func modelIdentifiers(v *phpser.Value, r Release) *phpser.Value {
	if v == nil || (v.Kind() != phpser.KindObject && v.Kind() != phpser.KindArray) {
		return v
	}
	withCC := r.AtLeast(9, 26, 0)
	ents := v.Entries()
	var out []phpser.Entry
	for i := range ents {
		nv := modelIdentifiers(&ents[i].Value, r)
		if nv != &ents[i].Value && out == nil {
			out = append([]phpser.Entry(nil), ents...)
		}
		if out != nil {
			out[i].Value = *nv
		}
	}
	if v.Kind() == phpser.KindObject && v.Class() == phpser.ModelIdentifierClass {
		if out == nil {
			out = append([]phpser.Entry(nil), ents...)
		}
		i, has := propIndex(out, "collectionClass")
		switch {
		case withCC && !has:
			out = append(out, phpser.PublicProp("collectionClass", phpser.Null()))
		case !withCC && has && out[i].Value.IsNull():
			out = append(out[:i], out[i+1:]...)
		}
	}
	if out == nil {
		return v
	}
	if v.Kind() == phpser.KindArray {
		return phpser.NewArray(out...)
	}
	return phpser.NewObject(v.Class(), out...)
}

// classShape is what laraq knows of a PHP class from the Go type standing for it, on
// one release.
type classShape struct {
	// queueable: the type embeds BusQueueable (the class uses Bus\Queueable).
	queueable bool
	// interacts: the type has InteractsWithQueue's job (a RuntimeJob field).
	interacts bool
	// serializesModels: the class uses SerializesModels (phpser.ModelSerializer; true
	// when the type does not say).
	serializesModels bool
	// ref is the zero value as PHP's unserialize() starts it: every property in PHP's
	// order at its declared default (fields without one at their zero value), the
	// release's Bus\Queueable properties in place of the struct's.
	ref *phpser.Value
	// defaults are the declared defaults by plain name: fields tagged default=, and the
	// release's Bus\Queueable properties.
	defaults map[string]*phpser.Value
}

var (
	busQueueableType = reflect.TypeFor[BusQueueable]()
	runtimeJobType   = reflect.TypeFor[RuntimeJob]()
	modelSerializer  = reflect.TypeFor[phpser.ModelSerializer]()
)

// interactsJob returns obj with InteractsWithQueue's job in release r's visibility: a
// public "job" becomes protected before 7.7.0, which made it public. The value is always
// null (RuntimeJob).
func interactsJob(obj *phpser.Value, r Release) *phpser.Value {
	if r.AtLeast(7, 7, 0) {
		return obj
	}
	ents := obj.Entries()
	for i := range ents {
		if !ents[i].Key.IsInt() && ents[i].Key.Str() == "job" {
			out := append([]phpser.Entry(nil), ents...)
			out[i].Key = phpser.StrKey(phpser.MangleName(phpser.Protected, "", "job"))
			return phpser.NewObject(obj.Class(), out...)
		}
	}
	return obj
}

type shapeKey struct {
	t                   reflect.Type
	major, minor, patch int
}

var shapes sync.Map // shapeKey → *classShape or error

// shapeOf returns the shape of struct type t (a pointer is followed) on release r.
func shapeOf(t reflect.Type, r Release) (*classShape, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("a %v is not a struct", t)
	}
	r = r.orLatest()
	key := shapeKey{t, r.Major, r.Minor, r.Patch}
	if s, ok := shapes.Load(key); ok {
		if err, bad := s.(error); bad {
			return nil, err
		}
		return s.(*classShape), nil
	}
	s, err := buildShape(t, r)
	if err != nil {
		shapes.Store(key, err)
		return nil, err
	}
	shapes.Store(key, s)
	return s, nil
}

func buildShape(t reflect.Type, r Release) (*classShape, error) {
	zero := reflect.Zero(t).Interface()
	s := &classShape{queueable: embeds(t, busQueueableType, 0), interacts: embeds(t, runtimeJobType, 0),
		serializesModels: true, defaults: map[string]*phpser.Value{}}
	switch {
	case t.Implements(modelSerializer):
		s.serializesModels = zero.(phpser.ModelSerializer).PHPSerializesModels()
	case reflect.PointerTo(t).Implements(modelSerializer):
		s.serializesModels = reflect.New(t).Interface().(phpser.ModelSerializer).PHPSerializesModels()
	}
	defs, err := phpser.Defaults(zero)
	if err != nil {
		return nil, err
	}
	for _, e := range defs.Entries() {
		v := e.Value
		s.defaults[propName(&e)] = &v
	}
	if defs.Kind() != phpser.KindObject {
		return nil, fmt.Errorf("a %v serializes as a PHP array, not an object: give it a PHPClass method naming the class", t)
	}
	// The zero value gives every property's place. A zero value that cannot be
	// written (an enum type's "" case) leaves the defaults' own order.
	s.ref = defs
	if v, err := marshalValue(zero, phpser.Encoder{ZeroMeansDefault: true}); err == nil {
		s.ref = v
	}
	if s.queueable {
		for n := range busTraitNames {
			delete(s.defaults, n)
		}
		for _, e := range busTraitProps(r) {
			v := e.Value
			s.defaults[propName(&e)] = &v
		}
		if s.ref, err = withReleaseTraits(s.ref, r, nil, false); err != nil {
			return nil, err
		}
	}
	if s.interacts {
		s.ref = interactsJob(s.ref, r)
	}
	s.ref = modelIdentifiers(s.ref, r)
	return s, nil
}

// embeds reports whether struct type t has a field of type want, directly or through
// embedded structs.
func embeds(t reflect.Type, want reflect.Type, depth int) bool {
	if depth > 8 {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if ft == want {
			return true
		}
		if f.Anonymous && ft.Kind() == reflect.Struct && embeds(ft, want, depth+1) {
			return true
		}
	}
	return false
}

// goCommand builds the command PHP would queue for a Go value on release r, with the
// properties in set (the dispatch options: onQueue(), delay(), ...) changed.
func goCommand(job any, r Release, set map[string]*phpser.Value) (*command, error) {
	live0, err := marshalValue(job, phpser.Encoder{ZeroMeansDefault: true})
	if err != nil {
		return nil, err
	}
	shape, err := shapeOf(reflect.TypeOf(job), r)
	if err != nil {
		return nil, err
	}
	c := &command{class: live0.Class(), methods: methodsOf(job, shape.defaults)}
	if d, ok := job.(DisplayNamer); ok {
		c.display = d.DisplayName()
	}
	if shape.interacts {
		live0 = interactsJob(live0, r)
	}
	changed := map[string]bool{}
	live := live0
	if shape.queueable {
		if live, err = withReleaseTraits(live0, r, set, false); err != nil {
			return nil, err
		}
		for _, e := range busTraitProps(r) {
			changed[propName(&e)] = true
		}
	} else {
		for name, v := range set {
			if _, ok := findProp(live, name); ok {
				live = setProp(live, name, v)
				changed[name] = true
			}
		}
	}
	c.live = modelIdentifiers(live, r)

	// SerializesModels leaves defaults out from 9.4, in the command and in nested objects
	// of classes using it; PHP's native serialize() writes every property.
	if !r.AtLeast(9, 4, 0) {
		c.out = c.live
		return c, nil
	}
	base, err := marshalValue(job, phpser.Encoder{OmitDefaults: true, ZeroMeansDefault: true})
	if err != nil {
		return nil, err
	}
	omit := shape.serializesModels
	var ents []phpser.Entry
	for _, e := range c.live.Entries() {
		name := propName(&e)
		if changed[name] {
			if d, ok := shape.defaults[name]; omit && ok && phpser.Identical(e.Value.Deref(), d) {
				continue
			}
			ents = append(ents, e)
			continue
		}
		if i, ok := findProp(base, name); ok {
			ents = append(ents, base.Entries()[i])
		}
	}
	c.out = modelIdentifiers(phpser.NewObject(c.class, ents...), r)
	return c, nil
}

// marshalValue is the phpser Value of a Go job, which must be an object with a class.
func marshalValue(job any, enc phpser.Encoder) (*phpser.Value, error) {
	b, err := enc.Marshal(job)
	if err != nil {
		return nil, err
	}
	v, err := phpser.Decode(b)
	if err != nil {
		return nil, err
	}
	if v.Kind() != phpser.KindObject {
		return nil, fmt.Errorf("a %T job serializes as a PHP %s, not an object: give the struct a PHPClass method naming the job class", job, v.Kind())
	}
	if v.Class() == "" {
		return nil, errors.New("the job object has no class name")
	}
	return v, nil
}

// valueCommand is a job given as a PHP value: written as it is, with the properties in
// set changed where the object has them (PHP's onQueue() and delay() exist only on
// classes that use Queueable).
func valueCommand(v *phpser.Value, set map[string]*phpser.Value) (*command, error) {
	if v == nil {
		return nil, errors.New("nil job")
	}
	if v.Kind() != phpser.KindObject {
		return nil, fmt.Errorf("a job value must be a PHP object, not a %s", v.Kind())
	}
	if v.Class() == "" {
		return nil, errors.New("the job object has no class name")
	}
	for name, x := range set {
		v = setProp(v, name, x)
	}
	return &command{class: v.Class(), live: v, out: v}, nil
}

// fillDefaults returns obj with each property of ref it lacks whose name is in
// defaults added, with ref's value, where PHP's declaration order (ref's) puts it:
// right after the closest property before it in ref that obj has, else right before
// the closest one after it, else at the end. It is what PHP's unserialize() makes of a
// payload that left defaults out.
func fillDefaults(obj, ref *phpser.Value, defaults map[string]*phpser.Value) *phpser.Value {
	out := append([]phpser.Entry(nil), obj.Entries()...)
	refEnts := ref.Entries()
	added := false
	for ri := range refEnts {
		name := propName(&refEnts[ri])
		if _, ok := defaults[name]; !ok || name == "" {
			continue
		}
		if _, ok := propIndex(out, name); ok {
			continue
		}
		at := -1
		for j := ri - 1; j >= 0 && at < 0; j-- {
			if i, ok := propIndex(out, propName(&refEnts[j])); ok && propName(&refEnts[j]) != "" {
				at = i + 1
			}
		}
		for j := ri + 1; j < len(refEnts) && at < 0; j++ {
			if i, ok := propIndex(out, propName(&refEnts[j])); ok && propName(&refEnts[j]) != "" {
				at = i
			}
		}
		if at < 0 {
			at = len(out)
		}
		out = append(out[:at], append([]phpser.Entry{refEnts[ri]}, out[at:]...)...)
		added = true
	}
	if !added {
		return obj
	}
	return phpser.NewObject(obj.Class(), out...)
}
