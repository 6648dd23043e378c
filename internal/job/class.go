package job

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/laraq/laraq/phpser"
)

// What laraq knows of a PHP class from the Go type standing for it: its properties in
// PHP's order with their declared defaults, and the Bus\Queueable trait of the release
// it runs on. PHP's unserialize() starts from the class defaults and the dispatcher's
// serialize() leaves them out (SerializesModels, 9.4+): both sides read it from here.

// busTraitNames are the properties Illuminate\Bus\Queueable declared in any release.
var busTraitNames = map[string]bool{
	"connection": true, "queue": true, "group": true, "messageGroup": true, "deduplicator": true,
	"debounceOwner": true, "uniqueLockOwner": true, "delay": true, "afterCommit": true,
	"middleware": true, "chained": true, "chainConnection": true, "chainQueue": true,
	"chainCatchCallbacks": true,
}

// BusTraitDefault is the default a Bus\Queueable property has in the releases that
// declare it.
func BusTraitDefault(name string) *phpser.Value {
	switch name {
	case "middleware", "chained":
		return phpser.NewArray()
	case "debounceOwner", "uniqueLockOwner":
		return phpser.String("")
	}
	return phpser.Null()
}

// BusTraitProps are the properties Bus\Queueable gives a class in release r, in order,
// with their defaults (Release.QueueableProps without InteractsWithQueue's job).
func BusTraitProps(r Release) []phpser.Entry {
	return r.QueueableProps()[1:]
}

// PropName is the plain name of a property entry ("" for an int key).
func PropName(e *phpser.Entry) string {
	if e.Key.IsInt() {
		return ""
	}
	n, _, _ := e.Key.Name()
	return n
}

// WithReleaseTraits returns obj with its Bus\Queueable properties replaced by those of
// release r, in r's order, at the place of the first one obj has (or at the end): each
// takes the value of set, else obj's own (messageGroup and 12.27's group are the same
// property), else its default. A property of another release that obj holds with a
// value other than its default is an error: r's PHP class has nowhere to keep it;
// lenient keeps it after the block instead, as PHP's unserialize() keeps a property the
// class does not declare (a payload of another release).
func WithReleaseTraits(obj *phpser.Value, r Release, set map[string]*phpser.Value, lenient bool) (*phpser.Value, error) {
	have := map[string]*phpser.Value{}
	at := -1
	var rest []phpser.Entry
	for _, e := range obj.Entries() {
		if n := PropName(&e); busTraitNames[n] {
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
	block := BusTraitProps(r)
	inRelease := map[string]bool{}
	for i := range block {
		name := PropName(&block[i])
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
		name := PropName(&e)
		if !busTraitNames[name] || inRelease[name] || phpser.Identical(e.Value.Deref(), BusTraitDefault(name)) {
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

// ModelIdentifiers returns v with every Illuminate\Contracts\Database\ModelIdentifier
// in the shape release r writes: 9.26 added collectionClass (null for a plain model or
// an Eloquent\Collection), so it is added where missing on 9.26+ and a null one removed
// before. Other values are returned as they are (shared, not copied).
func ModelIdentifiers(v *phpser.Value, r Release) *phpser.Value {
	if v == nil || (v.Kind() != phpser.KindObject && v.Kind() != phpser.KindArray) {
		return v
	}
	withCC := r.AtLeast(9, 26, 0)
	ents := v.Entries()
	var out []phpser.Entry
	for i := range ents {
		nv := ModelIdentifiers(&ents[i].Value, r)
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
		i, has := phpser.PropIndex(out, "collectionClass")
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

// ClassShape is what laraq knows of a PHP class from the Go type standing for it, on
// one release.
type ClassShape struct {
	// Queueable: the type embeds BusQueueable (the class uses Bus\Queueable).
	Queueable bool
	// Interacts: the type has InteractsWithQueue's job (a RuntimeJob field).
	Interacts bool
	// SerializesModels: the class uses SerializesModels (phpser.ModelSerializer; true
	// when the type does not say).
	SerializesModels bool
	// Ref is the zero value as PHP's unserialize() starts it: every property in PHP's
	// order at its declared default (fields without one at their zero value), the
	// release's Bus\Queueable properties in place of the struct's.
	Ref *phpser.Value
	// Defaults are the declared defaults by plain name: fields tagged default=, and the
	// release's Bus\Queueable properties.
	Defaults map[string]*phpser.Value
}

var (
	busQueueableType = reflect.TypeFor[BusQueueable]()
	runtimeJobType   = reflect.TypeFor[RuntimeJob]()
	modelSerializer  = reflect.TypeFor[phpser.ModelSerializer]()
)

// InteractsJob returns obj with InteractsWithQueue's job in release r's visibility: a
// public "job" becomes protected before 7.7.0, which made it public. The value is always
// null (RuntimeJob).
func InteractsJob(obj *phpser.Value, r Release) *phpser.Value {
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

var shapes sync.Map // shapeKey → *ClassShape or error

// ShapeOf returns the shape of struct type t (a pointer is followed) on release r.
func ShapeOf(t reflect.Type, r Release) (*ClassShape, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("a %v is not a struct", t)
	}
	r = OrLatest(r)
	key := shapeKey{t, r.Major, r.Minor, r.Patch}
	if s, ok := shapes.Load(key); ok {
		if err, bad := s.(error); bad {
			return nil, err
		}
		return s.(*ClassShape), nil
	}
	s, err := buildShape(t, r)
	if err != nil {
		shapes.Store(key, err)
		return nil, err
	}
	shapes.Store(key, s)
	return s, nil
}

func buildShape(t reflect.Type, r Release) (*ClassShape, error) {
	zero := reflect.Zero(t).Interface()
	s := &ClassShape{Queueable: embeds(t, busQueueableType, 0), Interacts: embeds(t, runtimeJobType, 0),
		SerializesModels: true, Defaults: map[string]*phpser.Value{}}
	switch {
	case t.Implements(modelSerializer):
		s.SerializesModels = zero.(phpser.ModelSerializer).PHPSerializesModels()
	case reflect.PointerTo(t).Implements(modelSerializer):
		s.SerializesModels = reflect.New(t).Interface().(phpser.ModelSerializer).PHPSerializesModels()
	}
	defs, err := phpser.Defaults(zero)
	if err != nil {
		return nil, err
	}
	for _, e := range defs.Entries() {
		v := e.Value
		s.Defaults[PropName(&e)] = &v
	}
	if defs.Kind() != phpser.KindObject {
		return nil, fmt.Errorf("a %v serializes as a PHP array, not an object: give it a PHPClass method naming the class", t)
	}
	// The zero value gives every property's place. A zero value that cannot be
	// written (an enum type's "" case) leaves the defaults' own order.
	s.Ref = defs
	if v, err := MarshalValue(zero, phpser.Encoder{ZeroMeansDefault: true}); err == nil {
		s.Ref = v
	}
	if s.Queueable {
		for n := range busTraitNames {
			delete(s.Defaults, n)
		}
		for _, e := range BusTraitProps(r) {
			v := e.Value
			s.Defaults[PropName(&e)] = &v
		}
		if s.Ref, err = WithReleaseTraits(s.Ref, r, nil, false); err != nil {
			return nil, err
		}
	}
	if s.Interacts {
		s.Ref = InteractsJob(s.Ref, r)
	}
	s.Ref = ModelIdentifiers(s.Ref, r)
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

// MarshalValue is the phpser Value of a Go job, which must be an object with a class.
func MarshalValue(job any, enc phpser.Encoder) (*phpser.Value, error) {
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

// FillDefaults returns obj with each property of ref it lacks whose name is in
// defaults added, with ref's value, where PHP's declaration order (ref's) puts it:
// right after the closest property before it in ref that obj has, else right before
// the closest one after it, else at the end. It is what PHP's unserialize() makes of a
// payload that left defaults out.
func FillDefaults(obj, ref *phpser.Value, defaults map[string]*phpser.Value) *phpser.Value {
	out := append([]phpser.Entry(nil), obj.Entries()...)
	refEnts := ref.Entries()
	added := false
	for ri := range refEnts {
		name := PropName(&refEnts[ri])
		if _, ok := defaults[name]; !ok || name == "" {
			continue
		}
		if _, ok := phpser.PropIndex(out, name); ok {
			continue
		}
		at := -1
		for j := ri - 1; j >= 0 && at < 0; j-- {
			if i, ok := phpser.PropIndex(out, PropName(&refEnts[j])); ok && PropName(&refEnts[j]) != "" {
				at = i + 1
			}
		}
		for j := ri + 1; j < len(refEnts) && at < 0; j++ {
			if i, ok := phpser.PropIndex(out, PropName(&refEnts[j])); ok && PropName(&refEnts[j]) != "" {
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
