package laraq

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
	next, err := nextInChain(cmd)
	if err != nil {
		return fmt.Errorf("continuing the chain of %s: %w", jr.job.Class, err)
	}
	if next == nil {
		return nil
	}
	if name, ok := stringProp(next, "connection"); ok && name != "" && name != c.s.connection {
		// Laravel would push it through that connection. Queue keys carry no connection
		// name, so another Redis connection on the same database shares these keys.
		c.log.Warn("next job of the chain names another queue connection; pushed to this worker's connection",
			"job", jr.job.Name, "id", jr.job.ID, "next", next.Class(), "connection", name, "worker_connection", c.s.connection)
	}
	m, err := c.chain.Prepare(next, AnyConnection())
	if err != nil {
		return fmt.Errorf("dispatching the next job of the chain (%s): %w", next.Class(), err)
	}
	if p, err := c.carryLogContext(jr, m.Payload, m.ID); err != nil {
		c.log.Warn("the job's Laravel Context is not carried to the next job of its chain", "job", jr.job.Name, "id", jr.job.ID, "err", err)
	} else {
		m.Payload = p
	}
	if err := c.retry(r.ackCtx, "dispatching the next job of a chain", func(ctx context.Context) error {
		return c.chain.Enqueue(ctx, m)
	}); err != nil {
		return fmt.Errorf("dispatching the next job of the chain (%s): %w", next.Class(), err)
	}
	c.log.Info("next job of the chain dispatched", "job", jr.job.Name, "id", jr.job.ID,
		"next", next.Class(), "next_id", m.ID, "queue", m.Queue, "delayed", m.Delayed)
	return nil
}

// nextInChain returns the command dispatchNextJobInChain dispatches after cmd, or nil
// when cmd's chain is empty: the first element of cmd's chained list unserialized, with
// chained = the rest (renumbered from 0, as array_shift does), connection = its own or
// else cmd's chainConnection, queue = its own or else cmd's chainQueue, and
// chainConnection, chainQueue and chainCatchCallbacks copied from cmd. Each property
// keeps its place in the stream; only values change.
func nextInChain(cmd *phpser.Value) (*phpser.Value, error) {
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

	var rest []phpser.Entry
	n := int64(0)
	for _, e := range ents[1:] {
		if e.Key.IsInt() {
			e.Key = phpser.IntKey(n)
			n++
		}
		rest = append(rest, e)
	}
	inherit := func(name string) *phpser.Value {
		if v, ok := cmd.Prop(name); ok {
			return v.Deref()
		}
		return phpser.Null()
	}
	orElse := func(name, fallback string) *phpser.Value {
		if v, ok := next.Prop(name); ok && v.Deref().Truthy() {
			return v.Deref()
		}
		return inherit(fallback)
	}
	sets := []struct {
		name string
		val  *phpser.Value
		def  func(*phpser.Value) bool // the property's default, which PHP 9.4+ may omit
	}{
		{"chained", phpser.NewArray(rest...), isEmptyArray},
		{"connection", orElse("connection", "chainConnection"), isNull},
		{"queue", orElse("queue", "chainQueue"), isNull},
		{"chainConnection", inherit("chainConnection"), isNull},
		{"chainQueue", inherit("chainQueue"), isNull},
		{"chainCatchCallbacks", inherit("chainCatchCallbacks"), isNull},
	}
	props := append([]phpser.Entry(nil), next.Entries()...)
	firstChange := len(props)
	for _, s := range sets {
		if hasRef(s.val) {
			return nil, fmt.Errorf("%s holds PHP references (r:/R:) that cannot be moved into the next job", s.name)
		}
		i, found := propIndex(props, s.name)
		switch {
		case found && phpser.Equal(&props[i].Value, s.val):
		case found:
			props[i].Value = *s.val
			firstChange = min(firstChange, i)
		case !s.def(s.val):
			// A class whose serialized form left the property out (SerializesModels on
			// Laravel 9.4+ omits defaults): PHP would write it in declaration order,
			// which is unknown here; PHP reads properties by name, so the end will do.
			props = append(props, phpser.PublicProp(s.name, s.val))
			firstChange = min(firstChange, len(props)-1)
		}
	}
	// A back-reference counts values from the start of the stream, so one written after a
	// changed value could point elsewhere once the value's size changed.
	for _, e := range next.Entries()[min(firstChange, next.Len()):] {
		if hasRef(&e.Value) {
			return nil, fmt.Errorf("%s holds PHP references (r:/R:) after its chain properties; it cannot be re-serialized exactly", next.Class())
		}
	}
	return phpser.NewObject(next.Class(), props...), nil
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

func isNull(v *phpser.Value) bool { return v.IsNull() }

func isEmptyArray(v *phpser.Value) bool { return v.Kind() == phpser.KindArray && v.Len() == 0 }

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
