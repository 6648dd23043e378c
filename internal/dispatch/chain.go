package dispatch

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/phpser"
)

// chainMarker opens a non-null `chained` property in serialize() output. A command
// whose every occurrence of it is followed by "0:{}" has no chain to continue, which
// spares decoding the commands of handlers that never looked at them.
const chainMarker = `s:7:"chained";a:`

// MayHaveChain reports whether a serialized command may hold a chain to continue.
func MayHaveChain(command string) bool { return job.MayHold(command, chainMarker, "0:{}") }

// Next is the job dispatchNextJobInChain dispatches (see NextInChain); PrepareNext
// builds its message.
type Next struct {
	cmd *command
	// Class is its class.
	Class string
	// mayLack lists, for a class without a Go type, the metadata properties its
	// serialized form does not hold: PHP may have them from class defaults, methods or
	// attributes, which laraq cannot see.
	MayLack []string
	// decodeErr: the next job's Go type does not describe it (its tags) or it did not
	// decode into it, so the type's defaults or methods are not read.
	DecodeErr error
}

// metaProps are the properties createObjectPayload reads the envelope's metadata from.
var metaProps = []string{"tries", "maxExceptions", "backoff", "timeout", "failOnTimeout", "retryUntil", "deleteWhenMissingModels"}

// NextInChain returns the job dispatchNextJobInChain dispatches after cmd on release rel,
// or nil when cmd's chain is empty: the first element of cmd's chained list unserialized
// (the properties it leaves out at their class defaults: the release's Bus\Queueable
// ones, and those of the Go type typeOf gives for its class), with chained = the rest
// (renumbered from 0, as array_shift does), connection = its own or else cmd's
// chainConnection, queue = its own or else cmd's chainQueue, and chainConnection,
// chainQueue and (8.0+) chainCatchCallbacks copied from cmd. It is then serialized as its class
// would: from 9.4, a class using SerializesModels leaves out every property identical to
// its default (the Go type says whether the class uses it; without one, a serialized
// form lacking middleware or chained did).
func NextInChain(cmd *phpser.Value, rel job.Release, typeOf func(class string) reflect.Type) (*Next, error) {
	cmd = cmd.Deref()
	chained, ok := cmd.Prop("chained")
	if !ok || !chained.Deref().Truthy() {
		return nil, nil // PHP: empty($this->chained)
	}
	chained = chained.Deref()
	if chained.Kind() != phpser.KindArray {
		return nil, fmt.Errorf("chained is a PHP %s, not an array", chained.Kind())
	}
	ents := chained.Entries()
	first := ents[0].Value.Deref()
	if first == nil || first.Kind() != phpser.KindString {
		return nil, errors.New("chained[0] is not a serialized job")
	}
	next, err := phpser.DecodeString(first.Str())
	if err != nil {
		return nil, fmt.Errorf("unserializing chained[0]: %w", err)
	}
	if next.Kind() != phpser.KindObject {
		return nil, fmt.Errorf("chained[0] unserializes to a PHP %s, not a job object", next.Kind())
	}
	class := next.Class()

	var rest []phpser.Entry
	n := int64(0)
	for _, e := range ents[1:] {
		if e.Key.IsInt() {
			e.Key = phpser.IntKey(n)
			n++
		}
		rest = append(rest, e)
	}

	// What PHP's unserialize() holds: the payload over the class's defaults.
	var shape *job.ClassShape
	var goType reflect.Type
	if typeOf != nil {
		goType = typeOf(class)
	}
	var typeErr error
	if goType != nil {
		// A Go type whose tags do not describe a PHP class (a bad default=) is a mistake
		// on the Go side: the chain goes on as for a class without a type, and says so.
		if shape, typeErr = job.ShapeOf(goType, rel); typeErr != nil {
			goType = nil
		}
	}
	omitted := !hasProp(next, "middleware") || !hasProp(next, "chained")
	defaults := map[string]*phpser.Value{"job": phpser.Null()}
	for _, e := range job.BusTraitProps(rel) {
		v := e.Value
		defaults[job.PropName(&e)] = &v
	}
	live, err := job.WithReleaseTraits(next, rel, nil, true)
	if err != nil {
		return nil, err
	}
	omit := rel.AtLeast(9, 4, 0) && omitted
	if shape != nil {
		live = job.FillDefaults(live, shape.Ref, shape.Defaults)
		for k, v := range shape.Defaults {
			defaults[k] = v
		}
		omit = rel.AtLeast(9, 4, 0) && shape.SerializesModels
	}

	inherit := func(name string) *phpser.Value {
		if v, ok := cmd.Prop(name); ok {
			return v.Deref()
		}
		return phpser.Null()
	}
	orElse := func(name, fallback string) *phpser.Value {
		if v, ok := live.Prop(name); ok && v.Deref().Truthy() {
			return v.Deref()
		}
		return inherit(fallback)
	}
	sets := []struct {
		name string
		val  *phpser.Value
	}{
		{"chained", phpser.NewArray(rest...)},
		{"connection", orElse("connection", "chainConnection")},
		{"queue", orElse("queue", "chainQueue")},
		{"chainConnection", inherit("chainConnection")},
		{"chainQueue", inherit("chainQueue")},
		{"chainCatchCallbacks", inherit("chainCatchCallbacks")},
	}
	if !rel.AtLeast(8, 0, 0) {
		sets = sets[:len(sets)-1] // 5.8–7.x have no catch callbacks to copy
	}
	for _, s := range sets {
		if hasRef(s.val) {
			return nil, fmt.Errorf("%s holds PHP references (r:/R:) that cannot be moved into the next job", s.name)
		}
		if _, found := phpser.PropIndex(live.Entries(), s.name); found {
			live = setProp(live, s.name, s.val)
		} else {
			live = phpser.NewObject(class, append(append([]phpser.Entry(nil), live.Entries()...), phpser.PublicProp(s.name, s.val))...)
		}
	}
	live = job.ModelIdentifiers(live, rel)

	// What serialize() writes of it.
	var outEnts []phpser.Entry
	for _, e := range live.Entries() {
		if d, ok := defaults[job.PropName(&e)]; omit && ok && phpser.Identical(e.Value.Deref(), d) {
			continue
		}
		outEnts = append(outEnts, e)
	}
	out := phpser.NewObject(class, outEnts...)
	// A back-reference counts values from the start of the stream, so one written after
	// a property that moved, appeared, disappeared or changed size could point elsewhere.
	orig := next.Entries()
	same := 0
	for same < len(orig) && same < len(outEnts) && orig[same].Key == outEnts[same].Key && phpser.Equal(&orig[same].Value, &outEnts[same].Value) {
		same++
	}
	for _, e := range orig[same:] {
		if hasRef(&e.Value) {
			return nil, fmt.Errorf("%s holds PHP references (r:/R:) after its chain properties; it cannot be re-serialized exactly", class)
		}
	}

	c := &command{class: class, live: live, out: out, methods: jobMethods{defaults: defaults}}
	res := &Next{cmd: c, Class: class, DecodeErr: typeErr}
	if goType == nil {
		for _, name := range metaProps {
			if !hasProp(next, name) {
				res.MayLack = append(res.MayLack, name)
			}
		}
		return res, nil
	}
	// The class's methods, called on the object PHP would hold.
	ptr := reflect.New(goType)
	if err := live.Decode(ptr.Interface()); err != nil {
		res.DecodeErr = err
		return res, nil
	}
	c.methods = methodsOf(ptr.Elem().Interface(), defaults)
	if d, ok := ptr.Elem().Interface().(job.DisplayNamer); ok {
		c.display = d.DisplayName()
	}
	return res, nil
}

// hasProp reports whether obj has a property of this plain name.
func hasProp(obj *phpser.Value, name string) bool {
	_, ok := phpser.PropIndex(obj.Entries(), name)
	return ok
}

// Connection is the next job's connection property ("" for none): Laravel would push it
// through that connection.
func (n *Next) Connection() string {
	p, ok := n.cmd.live.Prop("connection")
	if !ok {
		return ""
	}
	if p = p.Deref(); p == nil || p.Kind() != phpser.KindString {
		return ""
	}
	return p.Str()
}

// PrepareNext builds the next job's message, to be pushed to this dispatcher's
// connection whatever its connection property names (Queue keys carry no connection
// name, so another Redis connection on the same database shares these keys).
func (p *Dispatcher) PrepareNext(n *Next) (*Message, error) {
	return p.prepare(n.cmd, &Options{AnyConnection: true})
}

// hasRef reports whether v contains an r: or R: back-reference.
func hasRef(v *phpser.Value) bool {
	if v == nil {
		return false
	}
	if v.Kind() == phpser.KindRef {
		return true
	}
	for _, e := range v.Entries() {
		if hasRef(&e.Value) {
			return true
		}
	}
	return false
}
