package phpser

import (
	"cmp"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

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
//     property name (they may not have protected or private fields). A last option
//     `default=<JSON literal>` declares the PHP class default, which Encoder's options
//     use; Marshal itself writes every field as it is.
//   - string types with a PHPClass method become cases of that enum (E:).
//   - time.Time becomes an Illuminate\Support\Carbon (or the field's `class=`).
//   - maps become arrays sorted by key, so output is deterministic; Map keeps the
//     order given. String keys that are canonical decimals become int keys, as PHP's
//     arrays would make them.
//   - slices and arrays become lists (nil too: a:0:{}); []byte becomes a string.
//   - nil pointers and interfaces become N;. Object, EnumCase, Custom and *Value are
//     written as what they describe; Marshaler implementations write themselves.
//
// Marshal refuses values nested deeper than PHP's unserialize() accepts (4096 levels,
// counted as DefaultMaxDepth says), which also stops it on Go values that point back
// at themselves: PHP has references for that, Go pointers are written as copies.
func Marshal(v any) ([]byte, error) { return Encoder{}.AppendMarshal(nil, v) }

// AppendMarshal is Marshal appending to dst.
func AppendMarshal(dst []byte, v any) ([]byte, error) { return Encoder{}.AppendMarshal(dst, v) }

// Encoder is Marshal with options for the class defaults struct fields declare
// (`php:"tries,default=3"`, see Value.Decode). The zero Encoder is Marshal.
//
// A dispatcher writing a command for a Laravel 9.4+ worker sets both: the Go struct
// SendInvoice{OrderID: 7} then becomes what PHP's `new SendInvoice(7)` serializes to,
// class defaults applied and left out.
type Encoder struct {
	// OmitDefaults leaves out every property whose value is identical (PHP's ===:
	// same type and value, 0.0 === -0.0, arrays with the same keys, order and
	// values) to the default its field declares, as Laravel's SerializesModels
	// __serialize does from 9.4.0. PHP's unserialize() gives a property left out its
	// declared default, so where the tags declare the PHP class's defaults the object
	// PHP rebuilds is the same either way; only the bytes differ. It applies to the struct given to Marshal and to nested structs
	// whose type's PHPSerializesModels (ModelSerializer) returns true; the root is
	// left alone when it returns false, and other nested objects are written whole,
	// as PHP's native serialize() writes them. Default false: every property is
	// written, as Laravel up to 9.3 and PHP's native serialize() do.
	OmitDefaults bool

	// ZeroMeansDefault writes a field that declares a default and holds its Go zero
	// value (0, "", false, nil pointer, slice, map or interface) as that default:
	// SendInvoice{OrderID: 7} gets `public $tries = 3;` as `new SendInvoice(7)` does.
	// A field that must be able to hold its zero value as well takes a pointer
	// (*int with default=3: nil is 3, a pointer to 0 is 0). Fields tagged omitempty
	// are left out when zero as before. Default false: zero values are written.
	ZeroMeansDefault bool
}

// Marshal is the package's Marshal with the encoder's options.
func (en Encoder) Marshal(v any) ([]byte, error) { return en.AppendMarshal(nil, v) }

// AppendMarshal is Marshal appending to dst.
func (en Encoder) AppendMarshal(dst []byte, v any) ([]byte, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return append(dst, 'N', ';'), nil
	}
	e := encState{omitDefaults: en.OmitDefaults, zeroMeansDefault: en.ZeroMeansDefault}
	ri := rootInfoOf(rv.Type())
	root := ri.class
	if rv.Kind() == reflect.Struct {
		// An addressable value lets the encoders read fields such as time.Time in
		// place instead of boxing each one: the interface's own copy where nothing
		// may write to it, else a copy of ours.
		if ri.inPlace {
			rv = reflect.NewAt(rv.Type(), (*[2]unsafe.Pointer)(unsafe.Pointer(&v))[1]).Elem()
		} else {
			p := reflect.New(rv.Type()).Elem()
			p.Set(rv)
			rv = p
		}
	}
	// One buffer of the size this type's last output had, instead of growing dst
	// through every size class on the way there.
	if h := int(ri.sizeHint.Load()); cap(dst)-len(dst) < h {
		dst = slices.Grow(dst, h)
	}
	out, err := ri.enc(&e, dst, rv)
	if n := min(int64(len(out)-len(dst)), maxSizeHint); err == nil && n != ri.sizeHint.Load() {
		ri.sizeHint.Store(n)
	}
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
	depth int // PHP levels open around the value: objects and non-empty arrays
	ptrs  int // pointers followed, which PHP does not see as levels

	omitDefaults, zeroMeansDefault bool
}

// enter opens a PHP level (an object, or an array with an element), refusing one PHP's
// unserialize() would refuse.
func (e *encState) enter(t reflect.Type) error {
	if e.depth >= maxNesting {
		return e.err(t, "nested "+strconv.Itoa(e.depth+1)+" levels deep, deeper than the "+
			strconv.Itoa(maxNesting)+" PHP's unserialize() accepts (a cycle?)")
	}
	e.depth++
	return nil
}

func (e *encState) leave() { e.depth-- }

// value writes a *Value inside a Go value, its levels counted with the Go value's.
func (e *encState) value(b []byte, v *Value) ([]byte, error) {
	return encodeValue(b, v, e.depth, maxNesting)
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
			return e.value(b, rv.Interface().(*Value))
		}
	case valueType:
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			v := rv.Interface().(Value)
			return e.value(b, &v)
		}
	case mapType:
		return encodeOrderedMap
	case objectType:
		return encodeObject
	case reflect.TypeFor[EnumCase]():
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			c := rv.Interface().(EnumCase)
			return e.value(b, NewEnum(c.Class, c.Case))
		}
	case reflect.TypeFor[Custom]():
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			c := rv.Interface().(Custom)
			return e.value(b, NewCustom(c.Class, c.Data))
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
			b = appendInt(append(b, 'i', ':'), rv.Int())
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
		enc := typeEncoder(t.Elem())
		return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
			if rv.IsNil() {
				return append(b, 'N', ';'), nil
			}
			// Only a cycle of pointers alone (type P *P) passes no PHP level.
			e.ptrs++
			if e.ptrs > MaxDepthCeiling {
				return b, e.err(t, "more than "+strconv.Itoa(MaxDepthCeiling)+" pointers deep (a pointer cycle?)")
			}
			b, err := enc(e, b, rv.Elem())
			e.ptrs--
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
	return e.value(b, v)
}

func newListEncoder(t reflect.Type) encoderFunc {
	// Looked up once, here, not per value: a recursive type gets the placeholder
	// typeEncoder leaves while it is being built, which waits for it when called.
	enc := typeEncoder(t.Elem())
	return func(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
		n := rv.Len()
		b = append(b, 'a', ':')
		b = appendInt(b, int64(n))
		b = append(b, ':', '{')
		if n == 0 {
			return append(b, '}'), nil
		}
		if err := e.enter(t); err != nil {
			return b, err
		}
		var err error
		for i := 0; i < n; i++ {
			b = appendInt(append(b, 'i', ':'), int64(i))
			b = append(b, ';')
			if b, err = enc(e, b, rv.Index(i)); err != nil {
				return b, marshalAt(err, pathElem{index: int64(i), isIdx: true})
			}
		}
		e.leave()
		return append(b, '}'), nil
	}
}

// appendArrayKey writes a Go string key the way PHP stores it: canonical decimals
// are int keys.
func appendArrayKey(b []byte, k string) []byte {
	if n, ok := canonicalInt(k); ok {
		b = appendInt(append(b, 'i', ':'), n)
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
	enc := typeEncoder(t.Elem())
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
		b = appendInt(b, int64(len(items)))
		b = append(b, ':', '{')
		if len(items) == 0 {
			return append(b, '}'), nil
		}
		if err := e.enter(t); err != nil {
			return b, err
		}
		var err error
		for _, it := range items {
			seg := pathElem{name: it.s}
			if kt.Kind() == reflect.String {
				b = appendArrayKey(b, it.s)
			} else {
				b = appendInt(append(b, 'i', ':'), it.n)
				b = append(b, ';')
				seg = pathElem{index: it.n, isIdx: true}
			}
			if b, err = enc(e, b, it.val); err != nil {
				return b, marshalAt(err, seg)
			}
		}
		e.leave()
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
	return encodeMap(e, b, m)
}

func encodeMap(e *encState, b []byte, m Map) ([]byte, error) {
	b = append(b, 'a', ':')
	b = appendInt(b, int64(len(m)))
	b = append(b, ':', '{')
	if len(m) == 0 {
		return append(b, '}'), nil
	}
	if err := e.enter(mapType); err != nil {
		return b, err
	}
	var err error
	for _, it := range m {
		if it.Key.IsInt() {
			b = appendInt(append(b, 'i', ':'), it.Key.Int())
			b = append(b, ';')
		} else {
			b = append(appendLenQuoted(b, "s:", it.Key.s), ';')
		}
		if b, err = encodeAny(e, b, it.Value); err != nil {
			return b, marshalAt(err, keySeg(it.Key))
		}
	}
	e.leave()
	return append(b, '}'), nil
}

func keySeg(k Key) pathElem {
	if k.IsInt() {
		return pathElem{index: k.Int(), isIdx: true}
	}
	return pathElem{name: plainName(k.s)}
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
		return append(appendInt(append(b, 'i', ':'), v), ';'), nil
	case int:
		return append(appendInt(append(b, 'i', ':'), int64(v)), ';'), nil
	case float64:
		return append(appendFloat(append(b, 'd', ':'), v), ';'), nil
	case bool:
		if v {
			return append(b, "b:1;"...), nil
		}
		return append(b, "b:0;"...), nil
	case []any:
		b = append(b, 'a', ':')
		b = appendInt(b, int64(len(v)))
		b = append(b, ':', '{')
		if len(v) == 0 {
			return append(b, '}'), nil
		}
		if err := e.enter(anyType); err != nil {
			return b, err
		}
		var err error
		for i, el := range v {
			b = append(appendInt(append(b, 'i', ':'), int64(i)), ';')
			if b, err = encodeAny(e, b, el); err != nil {
				return b, marshalAt(err, pathElem{index: int64(i), isIdx: true})
			}
		}
		e.leave()
		return append(b, '}'), nil
	case Object:
		return encodeObjectProps(e, b, v)
	case Map:
		return encodeMap(e, b, v)
	}
	rv := reflect.ValueOf(x)
	return typeEncoder(rv.Type())(e, b, rv)
}

func encodeObject(e *encState, b []byte, rv reflect.Value) ([]byte, error) {
	return encodeObjectProps(e, b, rv.Interface().(Object))
}

var objectType = reflect.TypeFor[Object]()

func encodeObjectProps(e *encState, b []byte, o Object) ([]byte, error) {
	if !validClass(o.Class) {
		return b, e.err(objectType, "invalid class name "+strconv.Quote(o.Class))
	}
	// Sorted on the stack for the few properties an object usually has, with their
	// values, so that no name is looked up again.
	type prop struct {
		name string
		val  any
	}
	var buf [16]prop
	props := buf[:0]
	for k, v := range o.Props {
		props = append(props, prop{k, v})
	}
	slices.SortFunc(props, func(a, b prop) int { return strings.Compare(a.name, b.name) })
	b = appendLenQuoted(b, "O:", o.Class)
	b = append(b, ':')
	b = appendInt(b, int64(len(props)))
	b = append(b, ':', '{')
	if err := e.enter(objectType); err != nil {
		return b, err
	}
	var err error
	for _, p := range props {
		b = append(appendLenQuoted(b, "s:", p.name), ';')
		if b, err = encodeAny(e, b, p.val); err != nil {
			return b, marshalAt(err, pathElem{name: p.name})
		}
	}
	e.leave()
	return append(b, '}'), nil
}
