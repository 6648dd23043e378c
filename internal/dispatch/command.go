package dispatch

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/laraq/laraq/internal/job"
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

// goCommand builds the command PHP would queue for a Go value obj on release r, with the
// properties in set (the dispatch options: onQueue(), delay(), ...) changed.
func goCommand(obj any, r job.Release, set map[string]*phpser.Value) (*command, error) {
	live0, err := job.MarshalValue(obj, phpser.Encoder{ZeroMeansDefault: true})
	if err != nil {
		return nil, err
	}
	shape, err := job.ShapeOf(reflect.TypeOf(obj), r)
	if err != nil {
		return nil, err
	}
	c := &command{class: live0.Class(), methods: methodsOf(obj, shape.Defaults)}
	if d, ok := obj.(job.DisplayNamer); ok {
		c.display = d.DisplayName()
	}
	if shape.Interacts {
		live0 = job.InteractsJob(live0, r)
	}
	changed := map[string]bool{}
	live := live0
	if shape.Queueable {
		if live, err = job.WithReleaseTraits(live0, r, set, false); err != nil {
			return nil, err
		}
		for _, e := range job.BusTraitProps(r) {
			changed[job.PropName(&e)] = true
		}
	} else {
		for name, v := range set {
			if _, ok := phpser.PropIndex(live.Entries(), name); ok {
				live = setProp(live, name, v)
				changed[name] = true
			}
		}
	}
	c.live = job.ModelIdentifiers(live, r)

	// SerializesModels leaves defaults out from 9.4, in the command and in nested objects
	// of classes using it; PHP's native serialize() writes every property.
	if !r.AtLeast(9, 4, 0) {
		c.out = c.live
		return c, nil
	}
	base, err := job.MarshalValue(obj, phpser.Encoder{OmitDefaults: true, ZeroMeansDefault: true})
	if err != nil {
		return nil, err
	}
	omit := shape.SerializesModels
	var ents []phpser.Entry
	for _, e := range c.live.Entries() {
		name := job.PropName(&e)
		if changed[name] {
			if d, ok := shape.Defaults[name]; omit && ok && phpser.Identical(e.Value.Deref(), d) {
				continue
			}
			ents = append(ents, e)
			continue
		}
		if i, ok := phpser.PropIndex(base.Entries(), name); ok {
			ents = append(ents, base.Entries()[i])
		}
	}
	c.out = job.ModelIdentifiers(phpser.NewObject(c.class, ents...), r)
	return c, nil
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

// setProp returns a copy of the object with the property name set to val, keeping its
// position and visibility; an object without that property is returned unchanged
// (PHP's onQueue() and delay() exist only on classes that use Queueable).
func setProp(cmd *phpser.Value, name string, val *phpser.Value) *phpser.Value {
	i, ok := phpser.PropIndex(cmd.Entries(), name)
	if !ok {
		return cmd
	}
	ents := append([]phpser.Entry(nil), cmd.Entries()...)
	ents[i].Value = *val
	return phpser.NewObject(cmd.Class(), ents...)
}
