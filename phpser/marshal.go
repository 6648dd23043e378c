package phpser

import (
	"cmp"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"time"
)

// maxMarshalDepth stops Marshal on Go values that point back at themselves: PHP has
// references for that, Go pointers are written as copies.
const maxMarshalDepth = 512

// MarshalError reports a Go value Marshal cannot write.
type MarshalError struct {
	Path string       // property path, e.g. `App\Jobs\X.options[2]`
	Type reflect.Type // the Go type involved
	Msg  string

	rev  []pathElem // path collected while the error travels up, innermost first
	done bool
}

func marshalAt(err error, seg pathElem) error {
	if me, ok := err.(*MarshalError); ok && !me.done {
		me.rev = append(me.rev, seg)
	}
	return err
}

func (e *MarshalError) Error() string {
	s := "phpser: cannot marshal"
	if e.Type != nil {
		s += " Go " + e.Type.String()
	}
	if e.Path != "" {
		s += " at " + e.Path
	}
	return s + ": " + e.Msg
}

// Marshal writes v in PHP's serialize() format:
//
//   - structs with a PHPClass method become objects of that class (O:); each field's
//     tag gives the property name and visibility: `php:"podcast,protected"`,
//     `php:"options,private"` (mangled with the struct's class, or the class of the
//     embedded struct that declares the field; `private=Other\Class` overrides), and
//     `omitempty` skips zero values. Structs without PHPClass become arrays keyed by
//     property name (they may not have protected or private fields).
//   - string types with a PHPClass method become cases of that enum (E:).
//   - time.Time becomes an Illuminate\Support\Carbon (or the field's `class=`).
//   - maps become arrays sorted by key, so output is deterministic; Map keeps the
//     order given. String keys that are canonical decimals become int keys, as PHP's
//     arrays would make them.
//   - slices and arrays become lists (nil too: a:0:{}); []byte becomes a string.
//   - nil pointers and interfaces become N;. Object, EnumCase, Custom and *Value are
//     written as what they describe; Marshaler implementations write themselves.
func Marshal(v any) ([]byte, error) { return AppendMarshal(nil, v) }

// AppendMarshal is Marshal appending to dst.
func AppendMarshal(dst []byte, v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return append(dst, 'N', ';'), nil
	}
	e := encState{}
	root := ""
	if t := rv.Type(); t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		root = cachedClassOf(t.Elem())
	}
	if rv.Kind() == reflect.Struct {
		root = cachedClassOf(rv.Type())
		// An addressable copy lets the encoders read fields such as time.Time in
		// place instead of boxing each one.
		p := reflect.New(rv.Type()).Elem()
		p.Set(rv)
		rv = p
	}
	out, err := typeEncoder(rv.Type())(&e, dst, rv)
	if err != nil {
		if me, ok := err.(*MarshalError); ok && !me.done {
			slices.Reverse(me.rev)
			me.Path = renderPath(root, me.rev)
			me.rev, me.done = nil, true
		}
		return dst, err
	}
	return out, nil
}

type encState struct {
	depth int
}

func (e *encState) err(t reflect.Type, msg string) error {
	return &MarshalError{Type: t, Msg: msg}
}

type encoderFunc func(e *encState, b []byte, rv reflect.Value) ([]byte, error)

var encoderCache sync.Map // reflect.Type -> encoderFunc

func typeEncoder(t reflect.Type) encoderFunc {
	if f, ok := encoderCache.Load(t); ok {
		return f.(encoderFunc)
	}
	var (
		wg sync.WaitGroup
		fn encoderFunc
	)
	wg.Add(1)
	fi, loaded := encoderCache.LoadOrStore(t, encoderFunc(func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
		wg.Wait()
		return fn(e, b, rv)
	}))
	if loaded {
		return fi.(encoderFunc)
	}
	fn = newTypeEncoder(t, "")
	wg.Done()
	encoderCache.Store(t, fn)
	return fn
}

func newTypeEncoder(t reflect.Type, objClass string) encoderFunc {
	if t.Implements(marshalerType) {
		return encodeMarshaler
	}
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(marshalerType) {
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			if !rv.CanAddr() {
				c := reflect.New(t).Elem()
				c.Set(rv)
				rv = c
			}
			return encodeMarshaler(e, b, rv.Addr())
		}
	}
	switch t {
	case timeType:
		class := cmpOr(objClass, CarbonClass)
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			if rv.CanAddr() {
				return appendTime(b, *(*time.Time)(rv.Addr().UnsafePointer()), class), nil
			}
			return appendTime(b, rv.Interface().(time.Time), class), nil
		}
	case valuePtrType:
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			if rv.IsNil() {
				return append(b, 'N', ';'), nil
			}
			return encodeValue(b, rv.Interface().(*Value))
		}
	case valueType:
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			v := rv.Interface().(Value)
			return encodeValue(b, &v)
		}
	case mapType:
		return encodeOrderedMap
	case reflect.TypeFor[Object]():
		return encodeObject
	case reflect.TypeFor[EnumCase]():
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			c := rv.Interface().(EnumCase)
			return encodeValue(b, NewEnum(c.Class, c.Case))
		}
	case reflect.TypeFor[Custom]():
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			c := rv.Interface().(Custom)
			return encodeValue(b, NewCustom(c.Class, c.Data))
		}
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			if rv.Bool() {
				return append(b, "b:1;"...), nil
			}
			return append(b, "b:0;"...), nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			b = strconv.AppendInt(append(b, 'i', ':'), rv.Int(), 10)
			return append(b, ';'), nil
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			u := rv.Uint()
			if u > math.MaxInt64 {
				return b, e.err(t, strconv.FormatUint(u, 10)+" does not fit PHP's int64")
			}
			b = strconv.AppendUint(append(b, 'i', ':'), u, 10)
			return append(b, ';'), nil
		}
	case reflect.Float32, reflect.Float64:
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			b = appendFloat(append(b, 'd', ':'), rv.Float())
			return append(b, ';'), nil
		}
	case reflect.String:
		if enum := phpClassOf(t); enum != "" {
			return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
				c := rv.String()
				if !validIdent(c) {
					return b, e.err(t, "enum case "+strconv.Quote(c)+" is not a PHP identifier")
				}
				b = append(b, 'E', ':')
				b = strconv.AppendInt(b, int64(len(enum)+1+len(c)), 10)
				b = append(b, ':', '"')
				b = append(b, enum...)
				b = append(b, ':')
				b = append(b, c...)
				return append(b, '"', ';'), nil
			}
		}
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			return append(appendLenQuoted(b, "s:", rv.String()), ';'), nil
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(marshalerType) {
			return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
				return append(appendLenQuoted(b, "s:", string(rv.Bytes())), ';'), nil
			}
		}
		return newListEncoder(t)
	case reflect.Array:
		return newListEncoder(t)
	case reflect.Map:
		return newMapEncoder(t)
	case reflect.Pointer:
		elem := t.Elem()
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			if rv.IsNil() {
				return append(b, 'N', ';'), nil
			}
			e.depth++
			if e.depth > maxMarshalDepth {
				return b, e.err(t, "nested deeper than "+strconv.Itoa(maxMarshalDepth)+" (a pointer cycle?)")
			}
			b, err := typeEncoder(elem)(e, b, rv.Elem())
			e.depth--
			return b, err
		}
	case reflect.Interface:
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			if rv.IsNil() {
				return append(b, 'N', ';'), nil
			}
			if t.NumMethod() == 0 {
				return encodeAny(e, b, rv.Interface())
			}
			x := rv.Elem()
			return typeEncoder(x.Type())(e, b, x)
		}
	case reflect.Struct:
		return newStructEncoder(t, objClass)
	}
	return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
		return b, e.err(t, "unsupported type")
	}
}

func cmpOr(a, b string) string { return cmp.Or(a, b) }

func encodeMarshaler(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
	if rv.Kind() == reflect.Pointer && rv.IsNil() {
		return append(b, 'N', ';'), nil
	}
	v, err := rv.Interface().(Marshaler).MarshalPHP()
	if err != nil {
		return b, e.err(rv.Type(), err.Error())
	}
	if v == nil {
		return append(b, 'N', ';'), nil
	}
	return encodeValue(b, v)
}

func newListEncoder(t reflect.Type) encoderFunc {
	elem := t.Elem()
	return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
		n := rv.Len()
		b = append(b, 'a', ':')
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, ':', '{')
		enc := typeEncoder(elem)
		var err error
		for i := 0; i < n; i++ {
			b = strconv.AppendInt(append(b, 'i', ':'), int64(i), 10)
			b = append(b, ';')
			if b, err = enc(e, b, rv.Index(i)); err != nil {
				return b, marshalAt(err, pathElem{index: int64(i), isIdx: true})
			}
		}
		return append(b, '}'), nil
	}
}

// appendArrayKey writes a Go string key the way PHP stores it: canonical decimals
// are int keys.
func appendArrayKey(b []byte, k string) []byte {
	if n, ok := canonicalInt(k); ok {
		b = strconv.AppendInt(append(b, 'i', ':'), n, 10)
		return append(b, ';')
	}
	return append(appendLenQuoted(b, "s:", k), ';')
}

func newMapEncoder(t reflect.Type) encoderFunc {
	kt := t.Key()
	switch kt.Kind() {
	case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
	default:
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			return b, e.err(t, "map keys must be strings or integers")
		}
	}
	return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
		type kv struct {
			s   string
			n   int64
			val reflect.Value
		}
		items := make([]kv, 0, rv.Len())
		iter := rv.MapRange()
		for iter.Next() {
			k := iter.Key()
			it := kv{val: iter.Value()}
			switch k.Kind() {
			case reflect.String:
				it.s = k.String()
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
				if k.Uint() > math.MaxInt64 {
					return b, e.err(t, "map key "+strconv.FormatUint(k.Uint(), 10)+" does not fit PHP's int64")
				}
				it.n = int64(k.Uint())
			default:
				it.n = k.Int()
			}
			items = append(items, it)
		}
		if kt.Kind() == reflect.String {
			slices.SortFunc(items, func(a, b kv) int { return cmp.Compare(a.s, b.s) })
		} else {
			slices.SortFunc(items, func(a, b kv) int { return cmp.Compare(a.n, b.n) })
		}
		b = append(b, 'a', ':')
		b = strconv.AppendInt(b, int64(len(items)), 10)
		b = append(b, ':', '{')
		enc := typeEncoder(t.Elem())
		var err error
		for _, it := range items {
			seg := pathElem{name: it.s}
			if kt.Kind() == reflect.String {
				b = appendArrayKey(b, it.s)
			} else {
				b = strconv.AppendInt(append(b, 'i', ':'), it.n, 10)
				b = append(b, ';')
				seg = pathElem{index: it.n, isIdx: true}
			}
			if b, err = enc(e, b, it.val); err != nil {
				return b, marshalAt(err, seg)
			}
		}
		return append(b, '}'), nil
	}
}

func encodeOrderedMap(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
	var m Map
	if rv.CanAddr() {
		m = *(*Map)(rv.Addr().UnsafePointer())
	} else {
		m = rv.Interface().(Map)
	}
	b = append(b, 'a', ':')
	b = strconv.AppendInt(b, int64(len(m)), 10)
	b = append(b, ':', '{')
	var err error
	for _, it := range m {
		if it.Key.isInt {
			b = strconv.AppendInt(append(b, 'i', ':'), it.Key.num, 10)
			b = append(b, ';')
		} else {
			b = append(appendLenQuoted(b, "s:", it.Key.str), ';')
		}
		if b, err = encodeAny(e, b, it.Value); err != nil {
			return b, marshalAt(err, keySeg(it.Key))
		}
	}
	return append(b, '}'), nil
}

func keySeg(k Key) pathElem {
	if k.isInt {
		return pathElem{index: k.num, isIdx: true}
	}
	return pathElem{name: plainName(k.str)}
}

// encodeAny writes the dynamic value of an `any`; the forms Unmarshal produces for
// `any` are written without reflection.
func encodeAny(e *encState, b []byte, x any) ([]byte, error) {
	switch v := x.(type) {
	case nil:
		return append(b, 'N', ';'), nil
	case string:
		return append(appendLenQuoted(b, "s:", v), ';'), nil
	case int64:
		return append(strconv.AppendInt(append(b, 'i', ':'), v, 10), ';'), nil
	case int:
		return append(strconv.AppendInt(append(b, 'i', ':'), int64(v), 10), ';'), nil
	case float64:
		return append(appendFloat(append(b, 'd', ':'), v), ';'), nil
	case bool:
		if v {
			return append(b, "b:1;"...), nil
		}
		return append(b, "b:0;"...), nil
	case []any:
		b = append(b, 'a', ':')
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':', '{')
		var err error
		for i, el := range v {
			b = append(strconv.AppendInt(append(b, 'i', ':'), int64(i), 10), ';')
			if b, err = encodeAny(e, b, el); err != nil {
				return b, marshalAt(err, pathElem{index: int64(i), isIdx: true})
			}
		}
		return append(b, '}'), nil
	}
	rv := reflect.ValueOf(x)
	return typeEncoder(rv.Type())(e, b, rv)
}

func encodeObject(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
	o := rv.Interface().(Object)
	if !validClass(o.Class) {
		return b, e.err(rv.Type(), "invalid class name "+strconv.Quote(o.Class))
	}
	names := make([]string, 0, len(o.Props))
	for k := range o.Props {
		names = append(names, k)
	}
	slices.Sort(names)
	b = appendLenQuoted(b, "O:", o.Class)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(len(names)), 10)
	b = append(b, ':', '{')
	var err error
	for _, k := range names {
		b = append(appendLenQuoted(b, "s:", k), ';')
		if b, err = encodeAny(e, b, o.Props[k]); err != nil {
			return b, marshalAt(err, pathElem{name: k})
		}
	}
	return append(b, '}'), nil
}

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
	return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
		if keyErr != nil {
			return b, e.err(t, keyErr.Error())
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
		if class != "" {
			b = appendLenQuoted(b, "O:", class)
			b = append(b, ':')
		} else {
			b = append(b, 'a', ':')
		}
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, ':', '{')
		var err error
		for i := range si.fields {
			f := &si.fields[i]
			if f.rest {
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
		return append(b, '}'), nil
	}
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
			if en.Key.isInt {
				b = strconv.AppendInt(append(b, 'i', ':'), en.Key.num, 10)
				b = append(b, ';')
			} else {
				b = append(appendLenQuoted(b, "s:", en.Key.str), ';')
			}
			if b, err = encodeValue(b, &en.Value); err != nil {
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
