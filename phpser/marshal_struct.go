package phpser

import (
	"errors"
	"reflect"
	"slices"
	"strconv"
	"unsafe"
)

// Structs: objects of their PHPClass, or arrays for types without one.

func newStructEncoder(t reflect.Type, objClass string) encoderFunc {
	si, err := getStructInfo(t)
	if err != nil {
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) { return b, err }
	}
	class := cmpOr(objClass, si.class)
	encs := make([]encoderFunc, len(si.fields))
	for i := range si.fields {
		f := &si.fields[i]
		switch {
		case f.rest:
		case f.objClass != "":
			encs[i] = newTypeEncoder(f.typ, f.objClass)
			if f.typ.Kind() == reflect.Pointer {
				inner := newTypeEncoder(f.typ.Elem(), f.objClass)
				encs[i] = func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
					if rv.IsNil() {
						return append(b, 'N', ';'), nil
					}
					return inner(e, b, rv.Elem())
				}
			}
		default:
			encs[i] = typeEncoder(f.typ)
		}
	}
	// Keys of private fields mangled with the struct's own class are only known now.
	keys := make([][]byte, len(si.fields))
	var keyErr error
	for i := range si.fields {
		f := &si.fields[i]
		c := f.class
		if f.vis == Private && c == "" {
			c = class
		}
		if f.vis == Private && c == "" && keyErr == nil {
			keyErr = errors.New("private property " + strconv.Quote(f.name) + " needs a declaring class: give " + t.String() + " a PHPClass method or tag the field private=Class")
		}
		if class == "" && f.vis != Public && keyErr == nil {
			keyErr = errors.New("field " + f.name + " of " + t.String() + " is " + f.vis.String() + " but the struct has no PHPClass, so it is written as an array")
		}
		if class == "" {
			keys[i] = appendArrayKey(nil, f.name)
		} else {
			keys[i] = append(appendLenQuoted(nil, "s:", MangleName(f.vis, c, f.name)), ';')
		}
	}
	// Without omitempty, rest fields or embedded pointers the property count is fixed.
	fixed := true
	for i := range si.fields {
		f := &si.fields[i]
		if f.omitEmpty || f.rest || viaPointer(t, f.index) {
			fixed = false
		}
	}
	sm := serializesModels(t)
	// Fields written from the struct's memory when it is addressable (marshal_fast.go).
	fast := make([]fastEncoder, len(si.fields))
	offs := make([]uintptr, len(si.fields))
	for i := range si.fields {
		f := &si.fields[i]
		if f.rest || f.omitEmpty || f.objClass != "" {
			continue
		}
		if off, ok := fieldOffset(t, f.index); ok {
			fast[i], offs[i] = newFastEncoder(f.typ), off
		}
	}
	return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
		if keyErr != nil {
			return b, e.err(t, keyErr.Error())
		}
		// OmitDefaults is SerializesModels' doing: the root object's (the command's)
		// unless its type says otherwise, a nested one's only where its type says so.
		omit := e.omitDefaults && class != "" && len(si.defs) > 0 && (sm == 1 || (sm < 0 && e.depth == 0))
		if omit || (e.zeroMeansDefault && len(si.defs) > 0) {
			return encodeStructDefaults(e, b, rv, t, si, class, keys, encs, omit)
		}
		// The count comes first in the stream, so find what will be written.
		n := len(si.fields)
		var restV reflect.Value
		if !fixed {
			n = 0
			for i := range si.fields {
				f := &si.fields[i]
				fv, ok := fieldForRead(rv, f.index)
				switch {
				case !ok:
				case f.rest:
					restV = fv
					n += fv.Len()
				case f.omitEmpty && fv.IsZero():
				default:
					n++
				}
			}
		}
		b = appendStructHeader(b, class, n)
		level := class != "" || n > 0
		if level {
			if err := e.enter(t); err != nil {
				return b, err
			}
		}
		var (
			err  error
			base unsafe.Pointer
		)
		if rv.CanAddr() {
			base = rv.Addr().UnsafePointer()
		}
		for i := range si.fields {
			f := &si.fields[i]
			if f.rest {
				continue
			}
			if base != nil && fast[i] != nil {
				b = append(b, keys[i]...)
				if b, err = fast[i](e, b, unsafe.Add(base, offs[i])); err != nil {
					return b, marshalAt(err, pathElem{name: f.name})
				}
				continue
			}
			fv, ok := fieldForRead(rv, f.index)
			if !ok || (f.omitEmpty && fv.IsZero()) {
				continue
			}
			b = append(b, keys[i]...)
			if b, err = encs[i](e, b, fv); err != nil {
				return b, marshalAt(err, pathElem{name: f.name})
			}
		}
		if restV.IsValid() && restV.Len() > 0 {
			if b, err = encodeRest(e, b, restV); err != nil {
				return b, err
			}
		}
		if level {
			e.leave()
		}
		return append(b, '}'), nil
	}
}

// appendStructHeader writes the start of a struct's object (O:) or, for a type without
// a class, array (a:) of n properties.
func appendStructHeader(b []byte, class string, n int) []byte {
	if class != "" {
		b = appendLenQuoted(b, "O:", class)
		b = append(b, ':')
	} else {
		b = append(b, 'a', ':')
	}
	b = appendInt(b, int64(n))
	return append(b, ':', '{')
}

// encodeStructDefaults writes a struct whose fields declare defaults the way the
// Encoder's options ask. Whether a property is left out is only known once its value
// is written, so the properties are written first and the header, which starts with
// their count, is put in front of them afterwards.
func encodeStructDefaults(e *encState, b []byte, rv reflect.Value, t reflect.Type, si *structInfo, class string,
	keys [][]byte, encs []encoderFunc, omit bool) ([]byte, error) {
	start := len(b)
	n := 0
	entered := false
	// PHP counts an object as a level, an array only once it has an element.
	open := func() error {
		if entered {
			return nil
		}
		entered = true
		return e.enter(t)
	}
	if class != "" {
		if err := open(); err != nil {
			return b, err
		}
	}
	var (
		restV reflect.Value
		err   error
	)
	for i := range si.fields {
		f := &si.fields[i]
		fv, ok := fieldForRead(rv, f.index)
		if !ok {
			continue
		}
		if f.rest {
			restV = fv
			continue
		}
		zero := fv.IsZero()
		if f.omitEmpty && zero {
			continue
		}
		if err := open(); err != nil {
			return b, err
		}
		kstart := len(b)
		b = append(b, keys[i]...)
		vstart := len(b)
		if f.def != nil && zero && e.zeroMeansDefault {
			b = append(b, f.defBytes...)
		} else if b, err = encs[i](e, b, fv); err != nil {
			return b, marshalAt(err, pathElem{name: f.name})
		}
		if omit && f.def != nil && identicalBytes(b[vstart:], f.defBytes, f.def) {
			b = b[:kstart]
			continue
		}
		n++
	}
	if restV.IsValid() && restV.Len() > 0 {
		if err := open(); err != nil {
			return b, err
		}
		if b, err = encodeRest(e, b, restV); err != nil {
			return b, err
		}
		n += restV.Len()
	}
	if entered {
		e.leave()
	}
	var hdr [64]byte
	h := appendStructHeader(hdr[:0], class, n)
	b = slices.Insert(b, start, h...)
	return append(b, '}'), nil
}

// viaPointer reports whether reaching the field goes through an embedded pointer.
func viaPointer(t reflect.Type, index []int) bool {
	for _, x := range index[:len(index)-1] {
		f := t.Field(x)
		if f.Type.Kind() == reflect.Pointer {
			return true
		}
		t = f.Type
	}
	return false
}

// fieldForRead walks to a promoted field; false when an embedded pointer is nil.
func fieldForRead(v reflect.Value, index []int) (reflect.Value, bool) {
	if len(index) == 1 {
		return v.Field(index[0]), true
	}
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return v, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func encodeRest(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
	var err error
	if rv.Type() == entrySliceType {
		for _, en := range rv.Interface().([]Entry) {
			if en.Key.IsInt() {
				b = appendInt(append(b, 'i', ':'), en.Key.Int())
				b = append(b, ';')
			} else {
				b = append(appendLenQuoted(b, "s:", en.Key.s), ';')
			}
			if b, err = e.value(b, &en.Value); err != nil {
				return b, err
			}
		}
		return b, nil
	}
	keys := make([]string, 0, rv.Len())
	for _, k := range rv.MapKeys() {
		keys = append(keys, k.String())
	}
	slices.Sort(keys)
	enc := typeEncoder(rv.Type().Elem())
	for _, k := range keys {
		b = append(appendLenQuoted(b, "s:", k), ';')
		kv := reflect.New(rv.Type().Key()).Elem()
		kv.SetString(k)
		if b, err = enc(e, b, rv.MapIndex(kv)); err != nil {
			return b, marshalAt(err, pathElem{name: k})
		}
	}
	return b, nil
}
