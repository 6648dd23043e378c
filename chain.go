package laraq

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/laraq/laraq/phpser"
)

// chainMarker opens a non-null `chained` property in serialize() output. A command
// whose every occurrence of it is followed by "0:{}" has no chain to continue, which
// spares decoding the commands of handlers that never looked at them.
const chainMarker = `s:7:"chained";a:`

func mayHaveChain(command string) bool {
	for rest := command; ; {
		i := strings.Index(rest, chainMarker)
		if i < 0 {
			return false
		}
		rest = rest[i+len(chainMarker):]
		if !strings.HasPrefix(rest, "0:{}") {
			return true
		}
	}
}

// continueChain is CallQueuedHandler's ensureNextJobInChainIsDispatched for a job whose
// handler succeeded: when the command's chained list is not empty, its first element is
// dispatched as Bus\Queueable::dispatchNextJobInChain does. An error is the job's
// exception, as in PHP, where a dispatch that throws makes the job fail or retry.
func (c *Worker) continueChain(r *run, jr *jobRun) error {
	env := jr.job.Payload
	if env == nil || !env.IsObjectJob() || !mayHaveChain(env.Command) {
		return nil
	}
	cmd, err := jr.job.Value()
	if err != nil {
		return fmt.Errorf("reading the chain of %s: %w", jr.job.Class, err)
	}
	next, err := nextInChain(cmd, c.conn.Release, c.jobs.typeOf)
	if err != nil {
		return fmt.Errorf("continuing the chain of %s: %w", jr.job.Class, err)
	}
	if next == nil {
		return nil
	}
	class := next.cmd.class
	if next.decodeErr != nil {
		c.log.Warn("next job of the chain does not fit its Go type; its class defaults or tries(), backoff(), retryUntil() and displayName() are not read",
			"job", jr.job.Name, "id", jr.job.ID, "next", class, "err", next.decodeErr)
	}
	if len(next.mayLack) > 0 {
		if _, seen := c.jobs.unknownNext.LoadOrStore(class, true); !seen {
			c.log.Warn("next job of the chain has no Go type (laraq.Declare); metadata PHP takes from its class defaults, methods or attributes may be missing",
				"job", jr.job.Name, "next", class, "absent", strings.Join(next.mayLack, ","))
		}
	}
	if name, ok := stringProp(next.cmd.live, "connection"); ok && name != "" && name != c.s.connection {
		// Laravel would push it through that connection. Queue keys carry no connection
		// name, so another Redis connection on the same database shares these keys.
		c.log.Warn("next job of the chain names another queue connection; pushed to this worker's connection",
			"job", jr.job.Name, "id", jr.job.ID, "next", class, "connection", name, "worker_connection", c.s.connection)
	}
	m, err := c.chain.prepare(next.cmd, &options{anyConnection: true})
	if err != nil {
		return fmt.Errorf("dispatching the next job of the chain (%s): %w", class, err)
	}
	if p, err := c.carryLogContext(jr, m.Payload, m.ID); err != nil {
		c.log.Warn("the job's Laravel Context is not carried to the next job of its chain", "job", jr.job.Name, "id", jr.job.ID, "err", err)
	} else {
		m.Payload = p
	}
	if _, err := c.retry(r, jr, "dispatching the next job of a chain", func(ctx context.Context) error {
		return c.chain.enqueueOnce(ctx, m, max(2*c.reservation(), time.Minute))
	}); err != nil {
		return fmt.Errorf("dispatching the next job of the chain (%s): %w", class, err)
	}
	c.log.Info("next job of the chain dispatched", "job", jr.job.Name, "id", jr.job.ID,
		"next", class, "next_id", m.ID, "queue", m.Queue, "delayed", m.Delayed)
	return nil
}

// chainNext is the job dispatchNextJobInChain dispatches.
type chainNext struct {
	cmd *command
	// mayLack lists, for a class without a Go type, the metadata properties its
	// serialized form does not hold: PHP may have them from class defaults, methods or
	// attributes, which laraq cannot see.
	mayLack []string
	// decodeErr: the next job's Go type does not describe it (its tags) or it did not
	// decode into it, so the type's defaults or methods are not read.
	decodeErr error
}

// metaProps are the properties createObjectPayload reads the envelope's metadata from.
var metaProps = []string{"tries", "maxExceptions", "backoff", "timeout", "failOnTimeout", "retryUntil", "deleteWhenMissingModels"}

// nextInChain returns the job dispatchNextJobInChain dispatches after cmd on release rel,
// or nil when cmd's chain is empty: the first element of cmd's chained list unserialized
// (the properties it leaves out at their class defaults: the release's Bus\Queueable
// ones, and those of the Go type typeOf gives for its class), with chained = the rest
// (renumbered from 0, as array_shift does), connection = its own or else cmd's
// chainConnection, queue = its own or else cmd's chainQueue, and chainConnection,
// chainQueue and (8.0+) chainCatchCallbacks copied from cmd. It is then serialized as its class
// would: from 9.4, a class using SerializesModels leaves out every property identical to
// its default (the Go type says whether the class uses it; without one, a serialized
// form lacking middleware or chained did).
func nextInChain(cmd *phpser.Value, rel Release, typeOf func(class string) reflect.Type) (*chainNext, error) {
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
	var shape *classShape
	var goType reflect.Type
	if typeOf != nil {
		goType = typeOf(class)
	}
	var typeErr error
	if goType != nil {
		// A Go type whose tags do not describe a PHP class (a bad default=) is a mistake
		// on the Go side: the chain goes on as for a class without a type, and says so.
		if shape, typeErr = shapeOf(goType, rel); typeErr != nil {
			goType = nil
		}
	}
	omitted := !hasProp(next, "middleware") || !hasProp(next, "chained")
	defaults := map[string]*phpser.Value{"job": phpser.Null()}
	for _, e := range busTraitProps(rel) {
		v := e.Value
		defaults[propName(&e)] = &v
	}
	live, err := withReleaseTraits(next, rel, nil, true)
	if err != nil {
		return nil, err
	}
	omit := rel.AtLeast(9, 4, 0) && omitted
	if shape != nil {
		live = fillDefaults(live, shape.ref, shape.defaults)
		for k, v := range shape.defaults {
			defaults[k] = v
		}
		omit = rel.AtLeast(9, 4, 0) && shape.serializesModels
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
		if _, found := findProp(live, s.name); found {
			live = setProp(live, s.name, s.val)
		} else {
			live = phpser.NewObject(class, append(append([]phpser.Entry(nil), live.Entries()...), phpser.PublicProp(s.name, s.val))...)
		}
	}
	live = modelIdentifiers(live, rel)

	// What serialize() writes of it.
	var outEnts []phpser.Entry
	for _, e := range live.Entries() {
		if d, ok := defaults[propName(&e)]; omit && ok && phpser.Identical(e.Value.Deref(), d) {
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
	res := &chainNext{cmd: c, decodeErr: typeErr}
	if goType == nil {
		for _, name := range metaProps {
			if !hasProp(next, name) {
				res.mayLack = append(res.mayLack, name)
			}
		}
		return res, nil
	}
	// The class's methods, called on the object PHP would hold.
	ptr := reflect.New(goType)
	if err := live.Decode(ptr.Interface()); err != nil {
		res.decodeErr = err
		return res, nil
	}
	c.methods = methodsOf(ptr.Elem().Interface(), defaults)
	if d, ok := ptr.Elem().Interface().(DisplayNamer); ok {
		c.display = d.DisplayName()
	}
	return res, nil
}

// hasProp reports whether obj has a property of this plain name.
func hasProp(obj *phpser.Value, name string) bool {
	_, ok := findProp(obj, name)
	return ok
}

// propIndex finds a property by its plain name, whatever its visibility.
func propIndex(props []phpser.Entry, name string) (int, bool) {
	for i, e := range props {
		if e.Key.IsInt() {
			continue
		}
		if n, _, _ := e.Key.Name(); n == name {
			return i, true
		}
	}
	return -1, false
}

func stringProp(v *phpser.Value, name string) (string, bool) {
	p, ok := v.Prop(name)
	if !ok {
		return "", false
	}
	p = p.Deref()
	if p == nil || p.Kind() != phpser.KindString {
		return "", false
	}
	return p.Str(), true
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
