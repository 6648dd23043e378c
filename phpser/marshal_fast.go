package phpser

import (
	"reflect"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The fields a command is mostly made of (ints, strings, bools, floats, *string,
// []string, []int) are written straight from the struct's memory when the struct is
// addressable, without a reflect.Value per field: reflect's Field, Int and String
// checks cost more than writing the value does. Any type whose encoding newTypeEncoder
// would not give to its plain kind encoder (Marshaler, enum, Value, Map, ...) has no
// fast encoder and keeps the general path.

// fastEncoder writes the value of a field at p, as the general encoder of its type would.
type fastEncoder func(e *encState, b []byte, p unsafe.Pointer) ([]byte, error)

// plainKind reports whether newTypeEncoder gives t the encoder of its kind alone.
func plainKind(t reflect.Type) bool {
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) {
		return false
	}
	switch t {
	case timeType, valueType, valuePtrType, mapType, entrySliceType:
		return false
	}
	return t.Kind() != reflect.String || phpClassOf(t) == ""
}

// scalarWriter returns the writer of an int, string, bool or float of type t, or nil.
func scalarWriter(t reflect.Type) func(b []byte, p unsafe.Pointer) []byte {
	if !plainKind(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(b []byte, p unsafe.Pointer) []byte {
			if *(*bool)(p) {
				return append(b, "b:1;"...)
			}
			return append(b, "b:0;"...)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var read func(p unsafe.Pointer) int64
		switch t.Size() {
		case 1:
			read = func(p unsafe.Pointer) int64 { return int64(*(*int8)(p)) }
		case 2:
			read = func(p unsafe.Pointer) int64 { return int64(*(*int16)(p)) }
		case 4:
			read = func(p unsafe.Pointer) int64 { return int64(*(*int32)(p)) }
		case 8:
			return func(b []byte, p unsafe.Pointer) []byte {
				return append(appendInt(append(b, 'i', ':'), *(*int64)(p)), ';')
			}
		default:
			return nil
		}
		return func(b []byte, p unsafe.Pointer) []byte {
			return append(appendInt(append(b, 'i', ':'), read(p)), ';')
		}
	case reflect.Float64:
		return func(b []byte, p unsafe.Pointer) []byte {
			return append(appendFloat(append(b, 'd', ':'), *(*float64)(p)), ';')
		}
	case reflect.Float32:
		return func(b []byte, p unsafe.Pointer) []byte {
			return append(appendFloat(append(b, 'd', ':'), float64(*(*float32)(p))), ';')
		}
	case reflect.String:
		return func(b []byte, p unsafe.Pointer) []byte {
			return append(appendLenQuoted(b, "s:", *(*string)(p)), ';')
		}
	}
	return nil
}

// newFastEncoder returns the fast encoder of type t, or nil when t takes the general path.
func newFastEncoder(t reflect.Type) fastEncoder {
	if w := scalarWriter(t); w != nil {
		return func(e *encState, b []byte, p unsafe.Pointer) ([]byte, error) { return w(b, p), nil }
	}
	if !plainKind(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		w := scalarWriter(t.Elem())
		if w == nil {
			return nil
		}
		return func(e *encState, b []byte, p unsafe.Pointer) ([]byte, error) {
			q := *(*unsafe.Pointer)(p)
			if q == nil {
				return append(b, 'N', ';'), nil
			}
			// The pointer encoder's own limit, which a leaf reached through as many
			// pointers would hit.
			if e.ptrs >= MaxDepthCeiling {
				return typeEncoder(t)(e, b, reflect.NewAt(t, p).Elem())
			}
			return w(b, q), nil
		}
	case reflect.Slice:
		et := t.Elem()
		if et.Kind() == reflect.Uint8 {
			return nil // []byte is a string
		}
		w := scalarWriter(et)
		if w == nil {
			return nil
		}
		size := et.Size()
		return func(e *encState, b []byte, p unsafe.Pointer) ([]byte, error) {
			h := (*sliceHeader)(p)
			b = append(b, 'a', ':')
			b = appendInt(b, int64(h.len))
			b = append(b, ':', '{')
			if h.len == 0 {
				return append(b, '}'), nil
			}
			if err := e.enter(t); err != nil {
				return b, err
			}
			for i := 0; i < h.len; i++ {
				b = append(appendInt(append(b, 'i', ':'), int64(i)), ';')
				b = w(b, unsafe.Add(h.data, uintptr(i)*size))
			}
			e.leave()
			return append(b, '}'), nil
		}
	}
	return nil
}

// fieldOffset returns the offset of the field at index within t, and false when
// reaching it goes through an embedded pointer.
func fieldOffset(t reflect.Type, index []int) (uintptr, bool) {
	var off uintptr
	for i, x := range index {
		if t.Kind() != reflect.Struct {
			return 0, false
		}
		f := t.Field(x)
		off += f.Offset
		if i < len(index)-1 && f.Type.Kind() == reflect.Pointer {
			return 0, false
		}
		t = f.Type
	}
	return off, true
}

var readOnlyCache sync.Map // reflect.Type -> bool

// encodesReadOnly reports whether encoding a value of type t in place never hands a
// pointer into it to code that may write: no part stored inside it (fields, array
// elements) has a pointer-receiver MarshalPHP. Only then may Marshal read a struct
// from the interface it was passed in, whose memory is not ours to write (it may be
// read-only data), instead of copying it first.
func encodesReadOnly(t reflect.Type) bool {
	if r, ok := readOnlyCache.Load(t); ok {
		return r.(bool)
	}
	r := readOnlyWalk(t, map[reflect.Type]bool{})
	readOnlyCache.Store(t, r)
	return r
}

func readOnlyWalk(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	if !t.Implements(marshalerType) && reflect.PointerTo(t).Implements(marshalerType) {
		return false
	}
	switch t.Kind() {
	case reflect.Array:
		return readOnlyWalk(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if !readOnlyWalk(t.Field(i).Type, seen) {
				return false
			}
		}
	}
	return true
}

// rootInfo is what Marshal looks up once per call about the type it is given.
type rootInfo struct {
	class   string      // PHP class of the struct (or pointed-to struct), for error paths
	inPlace bool        // a struct read where its interface keeps it (see encodesReadOnly)
	enc     encoderFunc // the type's encoder
	// sizeHint is the length of the last output, at most maxSizeHint: the room
	// Marshal makes in dst up front.
	sizeHint atomic.Int64
}

// maxSizeHint bounds the room made up front, so that one huge value does not make
// every later, small one start with a huge buffer.
const maxSizeHint = 64 << 10

var rootCache sync.Map // reflect.Type -> *rootInfo

func rootInfoOf(t reflect.Type) *rootInfo {
	if ri, ok := rootCache.Load(t); ok {
		return ri.(*rootInfo)
	}
	ri := &rootInfo{enc: typeEncoder(t)}
	switch {
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct:
		ri.class = cachedClassOf(t.Elem())
	case t.Kind() == reflect.Struct:
		ri.class = cachedClassOf(t)
		// A struct larger than a pointer is always stored behind the interface's data
		// word, which the interface's own copy is then.
		ri.inPlace = t.Size() > unsafe.Sizeof(uintptr(0)) && encodesReadOnly(t)
	}
	rootCache.Store(t, ri)
	return ri
}
