package laraq

import "github.com/laraq/laraq/phpser"

// Unserialized returns the command as PHP's unserialize() rebuilds it: Value with every
// property the payload leaves out set to its class default, where a Go type is known
// for the class (Handle, HandleClass or Declare). Laravel 9.4+ SerializesModels writes
// only the properties that differ from their declared defaults (an 11.x `new
// SendInvoice(7)` arrives as O:20:"App\Jobs\SendInvoice":1:{s:7:"orderId";i:7;}), so an
// untyped handler reading `tries` or `queue` from Value would find nothing where PHP
// has the default. The defaults are the type's php tags (`php:"tries,default=3"`) and,
// for a type embedding Queueable, the Bus\Queueable properties of the connection's
// release, each placed where PHP declares it. Without a known type it is Value.
func (j *JobInfo) Unserialized() (*phpser.Value, error) {
	v, err := j.Value()
	if err != nil {
		return nil, err
	}
	t := j.jobs.typeOf(j.Class)
	if t == nil {
		return v, nil
	}
	shape, err := shapeOf(t, j.release)
	if err != nil {
		return nil, &DecodeError{Class: j.Class, Path: "data.command", Err: err}
	}
	obj := v.Deref()
	if obj.Kind() != phpser.KindObject {
		return v, nil
	}
	return fillDefaults(obj, shape.ref, shape.defaults), nil
}
