package phpser

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// MaxRefExpansion bounds how many values may be mapped (or printed) through
// references in one call. Each r:/R: is expanded into a copy of its target, so a
// crafted payload could otherwise nest references to blow a few hundred bytes up to
// gigabytes, as PHP itself never does because it shares the target.
const MaxRefExpansion = 1 << 20

// maxNesting bounds how deeply values nest once references are followed: the tree
// itself is bounded by Decoder.MaxDepth, but each reference is expanded into a copy of
// its target, which may be another deep subtree. A reference is followed only while
// no more than maxNesting containers are open around it, PHP's own
// unserialize_max_depth, so every reference of a payload PHP accepts is followed and
// the expansion nests at most about twice that deep.
const maxNesting = 4096

// UnmarshalTypeError reports a PHP value that does not fit the Go value it should
// go into.
type UnmarshalTypeError struct {
	Path   string       // property path, e.g. `App\Jobs\X.podcast.id`, or `options[3]`
	Offset int          // byte offset of the PHP value in the input, -1 when unknown
	PHP    string       // what was found, e.g. "string" or `object App\Models\User`
	Type   reflect.Type // the Go type it could not go into
	Msg    string       // extra detail, if any

	// The path is collected while the error travels up (innermost step first), so
	// that mapping keeps no path at all while it succeeds.
	rev  []pathElem
	done bool
}

// at records that err happened inside the property or element seg.
func at(err error, seg pathElem) error {
	if te, ok := err.(*UnmarshalTypeError); ok && !te.done {
		te.rev = append(te.rev, seg)
	}
	return err
}

func atKey(err error, k *Key) error {
	if k.IsInt() {
		return at(err, pathElem{index: k.Int(), isIdx: true})
	}
	return at(err, pathElem{name: plainName(k.Str())})
}

// finish renders the collected path under root.
func finish(err error, root string) error {
	if te, ok := err.(*UnmarshalTypeError); ok && !te.done {
		slices.Reverse(te.rev)
		te.Path = renderPath(root, te.rev)
		te.rev, te.done = nil, true
	}
	return err
}

func (e *UnmarshalTypeError) Error() string {
	var b strings.Builder
	b.WriteString("phpser: cannot unmarshal PHP ")
	b.WriteString(e.PHP)
	if e.Type != nil {
		b.WriteString(" into Go ")
		b.WriteString(e.Type.String())
	}
	if e.Path != "" {
		b.WriteString(" at ")
		b.WriteString(e.Path)
	}
	if e.Offset >= 0 {
		b.WriteString(" (offset ")
		b.WriteString(strconv.Itoa(e.Offset))
		b.WriteString(")")
	}
	if e.Msg != "" {
		b.WriteString(": ")
		b.WriteString(e.Msg)
	}
	return b.String()
}

// Unmarshal decodes data and maps it into v, which must be a non-nil pointer. See
// Value.Decode for the mapping rules.
func Unmarshal(data []byte, v any) error { return Decoder{}.Unmarshal(data, v) }

// Unmarshal decodes data with the decoder's options and maps it into v.
func (dc Decoder) Unmarshal(data []byte, v any) error {
	if t := reflect.TypeOf(v); len(data) > 0 && t != nil && t.Kind() == reflect.Pointer && !keepsTree(t.Elem()) && !reflect.ValueOf(v).IsNil() {
		return dc.unmarshalReusing(data, v)
	}
	root, err := dc.Decode(data)
	if err != nil {
		return err
	}
	return root.Decode(v)
}

// Decode maps the tree into target, a non-nil pointer:
//
//   - structs take objects (whatever their class) and arrays; a property goes into the
//     field tagged `php:"name"` whatever its visibility (protected "\0*\0name" and
//     private "\0Class\0name" included), else into the exported field of that name
//     (exact, then case-insensitive). Unknown properties are dropped unless a field
//     is tagged `php:",rest"` ([]Entry keeps them raw and ordered, a map[string]T
//     gets them by plain name).
//   - time.Time takes DateTime/Carbon objects (date, timezone_type 1/2/3, timezone).
//   - string types take strings and enum cases (the case name; a type with a
//     PHPClass method only takes cases of that enum); []byte takes strings.
//   - ints take ints (range-checked) and integral floats; floats take ints and floats.
//   - slices and arrays take array values in stream order; maps take arrays and
//     objects (int keys become decimal strings for string-keyed maps).
//   - any gets nil, bool, int64, float64, string, []any (for arrays whose keys are
//     0..n-1 in order), map[string]any (other arrays), Object, EnumCase or Custom.
//     Map keeps order and int keys when a caller needs them.
//   - *Value gets the node itself; Unmarshaler implementations get it too.
//   - a field tagged with a class default (`php:"tries,default=3"`) whose property an
//     object lacks gets that default, as PHP's unserialize() gives it; an array has no
//     class and so no defaults. Fields without one are left as they are.
//   - null leaves the zero value. References are followed; one that leads back into
//     a value being mapped (a cycle) leaves the zero value.
func (v *Value) Decode(target any) error {
	rv := reflect.ValueOf(target)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("phpser: Decode target must be a non-nil pointer, got " + reflect.TypeOf(target).String())
	}
	m := mapperPool.Get().(*mapper)
	m.active, m.inRef, m.budget = m.activeBuf[:0], 0, MaxRefExpansion
	err := m.decode(v, rv.Elem())
	m.active, m.strs = nil, nil
	clear(m.activeBuf[:])
	mapperPool.Put(m)
	if err != nil {
		root := ""
		if r := v.Deref(); r != nil && r.kind == KindObject {
			root = r.str
		}
		return finish(err, root)
	}
	return nil
}

type mapper struct {
	active []*Value // containers being mapped, to spot cycles through references
	inRef  int
	budget int
	// strs is where this call's *string targets and small []string slices are carved
	// from, one allocation for many (see newStrings). It belongs to the values mapped:
	// a new one is made for every call, never reused.
	strs []string
	// Room for typical nesting, so that mapping a job allocates nothing for it.
	activeBuf [24]*Value
}

var mapperPool = sync.Pool{New: func() any { return new(mapper) }}

func (m *mapper) typeErr(v *Value, t reflect.Type, msg string) error {
	off := -1
	if o, ok := v.Offset(); ok {
		off = o
	}
	what := v.kind.String()
	switch v.kind {
	case KindObject, KindCustom:
		what += " " + v.Class()
	case KindEnum:
		what += " " + v.str
	}
	return &UnmarshalTypeError{Offset: off, PHP: what, Type: t, Msg: msg}
}

// follow resolves a reference; ok is false when it closes a cycle.
func (m *mapper) follow(v *Value) (*Value, bool, error) {
	t := v.target()
	if t == nil {
		return nil, false, m.typeErr(v, nil, "reference "+strconv.FormatInt(v.num, 10)+" is not resolved")
	}
	for _, a := range m.active {
		if a == t {
			return nil, false, nil
		}
	}
	return t, true, nil
}

func (m *mapper) count(v *Value) error {
	if m.inRef > 0 {
		m.budget--
		if m.budget < 0 {
			return m.typeErr(v, nil, "references expand to more than "+strconv.Itoa(MaxRefExpansion)+" values")
		}
	}
	return nil
}

func (m *mapper) decode(v *Value, rv reflect.Value) error {
	return m.decodeWith(v, rv, typeDecoder(rv.Type()))
}

// decodeWith maps v into rv with rv's type decoder, following references.
func (m *mapper) decodeWith(v *Value, rv reflect.Value, dec decoderFunc) error {
	if v.kind == KindRef {
		t, ok, err := m.follow(v)
		if err != nil {
			return err
		}
		if !ok {
			rv.SetZero()
			return nil
		}
		if len(m.active) > maxNesting {
			return m.typeErr(v, nil, "reference is "+strconv.Itoa(len(m.active))+" levels deep; references are followed only up to "+strconv.Itoa(maxNesting))
		}
		m.inRef++
		err = m.decodeWith(t, rv, dec)
		m.inRef--
		return err
	}
	if m.inRef > 0 {
		if err := m.count(v); err != nil {
			return err
		}
	}
	return dec(m, v, rv)
}

type decoderFunc func(m *mapper, v *Value, rv reflect.Value) error

var decoderCache sync.Map // reflect.Type -> decoderFunc

var (
	timeType       = reflect.TypeFor[time.Time]()
	valueType      = reflect.TypeFor[Value]()
	valuePtrType   = reflect.TypeFor[*Value]()
	entrySliceType = reflect.TypeFor[[]Entry]()
	mapType        = reflect.TypeFor[Map]()
	anyType        = reflect.TypeFor[any]()
	stringType     = reflect.TypeFor[string]()
)

func isSpecialStruct(t reflect.Type) bool { return t == timeType || t == valueType }

func typeDecoder(t reflect.Type) decoderFunc {
	if f, ok := decoderCache.Load(t); ok {
		return f.(decoderFunc)
	}
	// Recursive types (type Node struct{ Kids []Node }) reach themselves while being
	// built; the placeholder forwards to the finished function.
	var (
		wg sync.WaitGroup
		fn decoderFunc
	)
	wg.Add(1)
	fi, loaded := decoderCache.LoadOrStore(t, decoderFunc(func(m *mapper, v *Value, rv reflect.Value) error {
		wg.Wait()
		return fn(m, v, rv)
	}))
	if loaded {
		return fi.(decoderFunc)
	}
	fn = newTypeDecoder(t)
	wg.Done()
	decoderCache.Store(t, fn)
	return fn
}

func newTypeDecoder(t reflect.Type) decoderFunc {
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(unmarshalerType) {
		return decodeUnmarshaler
	}
	switch t {
	case timeType:
		return decodeTimeValue
	case valuePtrType:
		return func(m *mapper, v *Value, rv reflect.Value) error { rv.Set(reflect.ValueOf(v)); return nil }
	case valueType:
		return func(m *mapper, v *Value, rv reflect.Value) error { rv.Set(reflect.ValueOf(*v)); return nil }
	case mapType:
		return decodeOrderedMap
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem := t.Elem()
		elemDec := typeDecoder(elem)
		return func(m *mapper, v *Value, rv reflect.Value) error {
			if v.kind == KindNull {
				rv.SetZero()
				return nil
			}
			if rv.IsNil() {
				var p unsafe.Pointer
				if elem == stringType {
					p = unsafe.Pointer(&m.newStrings(1)[0])
				} else {
					p = reflect.New(elem).UnsafePointer()
				}
				if rv.CanAddr() {
					// The type is known to match: skip Set's checks.
					*(*unsafe.Pointer)(rv.Addr().UnsafePointer()) = p
				} else {
					rv.Set(reflect.NewAt(elem, p))
				}
			}
			return elemDec(m, v, rv.Elem())
		}
	case reflect.Interface:
		if t.NumMethod() != 0 {
			return func(m *mapper, v *Value, rv reflect.Value) error {
				if v.kind == KindNull {
					rv.SetZero()
					return nil
				}
				return m.typeErr(v, t, "only the empty interface can take any value")
			}
		}
		return func(m *mapper, v *Value, rv reflect.Value) error {
			x, err := m.toAny(v)
			if err != nil {
				return err
			}
			if x == nil {
				rv.SetZero()
			} else {
				rv.Set(reflect.ValueOf(x))
			}
			return nil
		}
	case reflect.Bool:
		return func(m *mapper, v *Value, rv reflect.Value) error {
			switch v.kind {
			case KindBool:
				rv.SetBool(v.num != 0)
			case KindNull:
				rv.SetBool(false)
			default:
				return m.typeErr(v, t, "")
			}
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return decodeInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return decodeUint
	case reflect.Float32, reflect.Float64:
		return decodeFloat
	case reflect.String:
		return newStringDecoder(t)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return decodeBytes
		}
		return newSliceDecoder(t)
	case reflect.Array:
		return newArrayDecoder(t)
	case reflect.Map:
		return newMapDecoder(t)
	case reflect.Struct:
		return newStructDecoder(t)
	}
	return func(m *mapper, v *Value, rv reflect.Value) error {
		return m.typeErr(v, t, "unsupported Go type")
	}
}

func decodeUnmarshaler(m *mapper, v *Value, rv reflect.Value) error {
	if !rv.CanAddr() {
		return m.typeErr(v, rv.Type(), "Unmarshaler needs an addressable value")
	}
	if err := rv.Addr().Interface().(Unmarshaler).UnmarshalPHP(v); err != nil {
		var te *UnmarshalTypeError
		if errors.As(err, &te) {
			return err
		}
		return m.typeErr(v, rv.Type(), err.Error())
	}
	return nil
}

func decodeInt(m *mapper, v *Value, rv reflect.Value) error {
	var n int64
	switch v.kind {
	case KindInt:
		n = v.num
	case KindFloat:
		f := v.Float()
		if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
			return m.typeErr(v, rv.Type(), "not a whole number")
		}
		n = int64(f)
	case KindNull:
		rv.SetInt(0)
		return nil
	default:
		return m.typeErr(v, rv.Type(), "")
	}
	if rv.OverflowInt(n) {
		return m.typeErr(v, rv.Type(), strconv.FormatInt(n, 10)+" overflows it")
	}
	rv.SetInt(n)
	return nil
}

func decodeUint(m *mapper, v *Value, rv reflect.Value) error {
	var n int64
	switch v.kind {
	case KindInt:
		n = v.num
	case KindFloat:
		f := v.Float()
		if f != math.Trunc(f) || f < 0 || f >= math.MaxInt64 {
			return m.typeErr(v, rv.Type(), "not a whole number")
		}
		n = int64(f)
	case KindNull:
		rv.SetUint(0)
		return nil
	default:
		return m.typeErr(v, rv.Type(), "")
	}
	if n < 0 || rv.OverflowUint(uint64(n)) {
		return m.typeErr(v, rv.Type(), strconv.FormatInt(n, 10)+" overflows it")
	}
	rv.SetUint(uint64(n))
	return nil
}

func decodeFloat(m *mapper, v *Value, rv reflect.Value) error {
	switch v.kind {
	case KindFloat:
		rv.SetFloat(v.Float())
	case KindInt:
		rv.SetFloat(float64(v.num))
	case KindNull:
		rv.SetFloat(0)
	default:
		return m.typeErr(v, rv.Type(), "")
	}
	return nil
}

func newStringDecoder(t reflect.Type) decoderFunc {
	enumClass := phpClassOf(t)
	return func(m *mapper, v *Value, rv reflect.Value) error {
		switch v.kind {
		case KindString:
			rv.SetString(v.str)
		case KindEnum:
			if enumClass != "" && v.EnumClass() != enumClass {
				return m.typeErr(v, t, "want a case of "+enumClass)
			}
			rv.SetString(v.EnumCase())
		case KindNull:
			rv.SetString("")
		default:
			return m.typeErr(v, t, "")
		}
		return nil
	}
}

func decodeBytes(m *mapper, v *Value, rv reflect.Value) error {
	switch v.kind {
	case KindString:
		rv.SetBytes([]byte(v.str))
	case KindNull:
		rv.SetZero()
	case KindArray:
		return newSliceDecoder(rv.Type())(m, v, rv)
	default:
		return m.typeErr(v, rv.Type(), "")
	}
	return nil
}

// enter marks v as being mapped, for cycle detection through references.
func (m *mapper) enter(v *Value) { m.active = append(m.active, v) }
func (m *mapper) leave()         { m.active = m.active[:len(m.active)-1] }

func newStructDecoder(t reflect.Type) decoderFunc {
	si, err := getStructInfo(t)
	if err != nil {
		return func(m *mapper, v *Value, rv reflect.Value) error { return err }
	}
	decs := make([]decoderFunc, len(si.fields))
	retains := make([]bool, len(si.fields))
	fast := make([]fastField, len(si.fields)) // see unmarshal_fast.go
	offs := make([]uintptr, len(si.fields))
	for i := range si.fields {
		if !si.fields[i].rest {
			ft := si.fields[i].typ
			decs[i] = typeDecoder(ft)
			retains[i] = ft == valuePtrType || ft.Implements(unmarshalerType) || reflect.PointerTo(ft).Implements(unmarshalerType)
			if off, ok := fieldOffset(t, si.fields[i].index); ok {
				fast[i], offs[i] = fastFieldOf(ft), off
			}
		}
	}
	return func(m *mapper, v *Value, rv reflect.Value) error {
		switch v.kind {
		case KindNull:
			rv.SetZero()
			return nil
		case KindObject, KindArray:
		default:
			return m.typeErr(v, t, "")
		}
		m.enter(v)
		ents := v.ents()
		hint := 0
		var base unsafe.Pointer
		if rv.CanAddr() {
			base = rv.Addr().UnsafePointer()
		}
		// PHP creates the object with every declared default before it sets the
		// properties in the stream; fields that declare one and get no property take
		// it afterwards (arrays have no class, so no defaults).
		var seenBuf [4]uint64
		var seen []uint64
		if len(si.defs) > 0 && v.kind == KindObject {
			seen = seenBuf[:]
			if n := (len(si.fields) + 63) / 64; n > len(seenBuf) {
				seen = make([]uint64, n)
			}
		}
		for i := range ents {
			e := &ents[i]
			var (
				name, class string
				vis         Visibility
			)
			if e.Key.IsInt() {
				name = strconv.FormatInt(e.Key.Int(), 10)
			} else {
				name, vis, class = UnmangleName(e.Key.Str())
			}
			// Properties mostly arrive in field order (Marshal and PHP both write
			// declaration order), so try the field after the last match first.
			var f *field
			if hint < len(si.fields) && si.fields[hint].unique && si.fields[hint].name == name {
				f = &si.fields[hint]
			} else {
				f = si.lookup(name, vis, class)
			}
			if f == nil {
				if si.rest < 0 {
					continue
				}
				if err := m.rest(&si.fields[si.rest], rv, e, name); err != nil {
					return err
				}
				continue
			}
			// References, and values inside one (which count towards its expansion),
			// take the field's decoder.
			if base == nil || m.inRef > 0 || fast[f.pos] == fastNone ||
				!m.decodeFast(fast[f.pos], unsafe.Add(base, offs[f.pos]), &e.Value) {
				fv, err := fieldByIndex(rv, f.index)
				if err != nil {
					return at(m.typeErr(&e.Value, f.typ, err.Error()), pathElem{name: name})
				}
				if err := m.decodeWith(&e.Value, fv, decs[f.pos]); err != nil {
					return at(err, pathElem{name: name})
				}
			}
			hint = f.pos + 1
			if seen != nil {
				seen[f.pos/64] |= 1 << (f.pos % 64)
			}
		}
		for _, pos := range si.defs {
			if seen == nil {
				break
			}
			if seen[pos/64]&(1<<(pos%64)) != 0 {
				continue
			}
			f := &si.fields[pos]
			fv, err := fieldByIndex(rv, f.index)
			if err == nil {
				def := f.def
				if retains[pos] {
					// The field keeps the node itself: give it its own, not the
					// type's cached default.
					c := *def
					def = &c
				}
				err = m.decodeWith(def, fv, decs[pos])
			}
			if err != nil {
				return fmt.Errorf("phpser: default of %v.%s: %w", t, f.name, err)
			}
		}
		m.leave()
		return nil
	}
}

// rest stores a property no field claimed into the catch-all field.
func (m *mapper) rest(f *field, rv reflect.Value, e *Entry, name string) error {
	fv, err := fieldByIndex(rv, f.index)
	if err != nil {
		return m.typeErr(&e.Value, f.typ, err.Error())
	}
	if f.typ == entrySliceType {
		fv.Set(reflect.Append(fv, reflect.ValueOf(*e)))
		return nil
	}
	if fv.IsNil() {
		fv.Set(reflect.MakeMap(f.typ))
	}
	ev := reflect.New(f.typ.Elem()).Elem()
	if err := m.decode(&e.Value, ev); err != nil {
		return at(err, pathElem{name: name})
	}
	kv := reflect.New(f.typ.Key()).Elem()
	kv.SetString(name)
	fv.SetMapIndex(kv, ev)
	return nil
}

// fieldByIndex walks to a (possibly promoted) field, allocating embedded pointers.
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, error) {
	if len(index) == 1 {
		return v.Field(index[0]), nil
	}
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				if !v.CanSet() {
					return v, errors.New("cannot set embedded pointer to unexported struct " + v.Type().Elem().String())
				}
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, nil
}

func decodeOrderedMap(m *mapper, v *Value, rv reflect.Value) error {
	switch v.kind {
	case KindNull:
		rv.SetZero()
		return nil
	case KindArray, KindObject:
	default:
		return m.typeErr(v, rv.Type(), "")
	}
	out := make(Map, 0, len(v.ents()))
	m.enter(v)
	ents := v.ents()
	for i := range ents {
		e := &ents[i]
		x, err := m.toAny(&e.Value)
		if err != nil {
			return atKey(err, &e.Key)
		}
		out = append(out, MapItem{Key: e.Key, Value: x})
	}
	m.leave()
	if rv.CanAddr() {
		*(*Map)(rv.Addr().UnsafePointer()) = out
	} else {
		rv.Set(reflect.ValueOf(out))
	}
	return nil
}

func decodeTimeValue(m *mapper, v *Value, rv reflect.Value) error {
	if v.kind == KindNull {
		rv.SetZero()
		return nil
	}
	t, err := TimeOf(v)
	if err != nil {
		return m.typeErr(v, timeType, strings.TrimPrefix(err.Error(), "phpser: "))
	}
	if rv.CanAddr() {
		*(*time.Time)(rv.Addr().UnsafePointer()) = t
	} else {
		rv.Set(reflect.ValueOf(t))
	}
	return nil
}
