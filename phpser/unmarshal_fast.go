package phpser

import (
	"math"
	"reflect"
	"unsafe"
)

// Unmarshal's counterpart of marshal_fast.go: a property whose value has the very kind
// its field holds (an int into an int64, a string into a string or *string, ...) is
// stored straight into the addressable struct, without a reflect.Value for the field.
// Every other case, conversions and errors included, takes the field's decoder, so
// the result is the same.

// fastField is how a field can take a value of its own kind directly; 0 is never.
type fastField uint8

const (
	fastNone fastField = iota
	fastInt64
	fastString
	fastStringPtr
	fastBool
	fastFloat64
)

// fastFieldOf returns the fast case of a field of type t, if its decoder is the plain
// one of its kind (no Unmarshaler, not one of the types with a decoder of their own).
func fastFieldOf(t reflect.Type) fastField {
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return fastNone
	}
	switch t {
	case timeType, valueType, valuePtrType, mapType:
		return fastNone
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		if t.Size() == 8 {
			return fastInt64
		}
	case reflect.String:
		return fastString
	case reflect.Bool:
		return fastBool
	case reflect.Float64:
		return fastFloat64
	case reflect.Pointer:
		if t.Elem() == stringType {
			return fastStringPtr
		}
	}
	return fastNone
}

// decodeFast stores v into the field of kind k at p and reports true, or reports
// false, having done nothing, when v is not of the field's own kind.
func (m *mapper) decodeFast(k fastField, p unsafe.Pointer, v *Value) bool {
	switch k {
	case fastInt64:
		if v.kind == KindInt {
			*(*int64)(p) = v.num
			return true
		}
	case fastString:
		if v.kind == KindString {
			*(*string)(p) = v.str
			return true
		}
	case fastStringPtr:
		switch v.kind {
		case KindNull:
			*(**string)(p) = nil
			return true
		case KindString:
			sp := *(**string)(p)
			if sp == nil {
				sp = &m.newStrings(1)[0]
				*(**string)(p) = sp
			}
			*sp = v.str
			return true
		}
	case fastBool:
		if v.kind == KindBool {
			*(*bool)(p) = v.num != 0
			return true
		}
	case fastFloat64:
		if v.kind == KindFloat {
			*(*float64)(p) = math.Float64frombits(uint64(v.num))
			return true
		}
	}
	return false
}
