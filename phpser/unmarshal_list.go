package phpser

import (
	"reflect"
	"strconv"
	"unsafe"
)

// Lists and maps: slices, arrays, Go maps and their keys.

func newSliceDecoder(t reflect.Type) decoderFunc {
	dec := typeDecoder(t.Elem())
	stringElems := t.Elem() == stringType
	fast, size := fastFieldOf(t.Elem()), t.Elem().Size() // see unmarshal_fast.go
	return func(m *mapper, v *Value, rv reflect.Value) error {
		switch v.kind {
		case KindNull:
			rv.SetZero()
			return nil
		case KindArray:
		default:
			return m.typeErr(v, t, "")
		}
		ents := v.ents()
		n := len(ents)
		s := rv
		if n == 0 {
			// An empty PHP array is an empty slice, not a nil one.
			if rv.CanAddr() {
				// Any non-nil pointer makes a valid empty slice; no allocation needed.
				*(*sliceHeader)(rv.Addr().UnsafePointer()) = sliceHeader{data: unsafe.Pointer(&zeroLen)}
			} else {
				rv.Set(reflect.MakeSlice(t, 0, 0))
			}
			return nil
		}
		if stringElems && rv.CanAddr() && rv.Cap() < n {
			// A short list of strings takes its room from the call's slab.
			strs := m.newStrings(n)
			*(*sliceHeader)(rv.Addr().UnsafePointer()) = sliceHeader{data: unsafe.Pointer(unsafe.SliceData(strs)), len: n, cap: n}
		} else if rv.CanAddr() {
			// Growing the field in place allocates only the backing array.
			rv.SetLen(0)
			if rv.Cap() < n {
				rv.Grow(n)
				rv.SetLen(n)
			} else {
				rv.SetLen(n)
				for i := 0; i < n; i++ {
					rv.Index(i).SetZero()
				}
			}
		} else {
			s = reflect.MakeSlice(t, n, n)
		}
		m.enter(v)
		data := s.UnsafePointer()
		for i := range ents {
			e := &ents[i]
			if fast != fastNone && m.inRef == 0 && m.decodeFast(fast, unsafe.Add(data, uintptr(i)*size), &e.Value) {
				continue
			}
			if err := m.decodeWith(&e.Value, s.Index(i), dec); err != nil {
				return atKey(err, &e.Key)
			}
		}
		m.leave()
		if !rv.CanAddr() {
			rv.Set(s)
		}
		return nil
	}
}

func newArrayDecoder(t reflect.Type) decoderFunc {
	return func(m *mapper, v *Value, rv reflect.Value) error {
		switch v.kind {
		case KindNull:
			rv.SetZero()
			return nil
		case KindArray:
		default:
			return m.typeErr(v, t, "")
		}
		if len(v.ents()) > t.Len() {
			return m.typeErr(v, t, strconv.Itoa(len(v.ents()))+" elements do not fit")
		}
		rv.SetZero()
		m.enter(v)
		ents := v.ents()
		for i := range ents {
			e := &ents[i]
			if err := m.decode(&e.Value, rv.Index(i)); err != nil {
				return atKey(err, &e.Key)
			}
		}
		m.leave()
		return nil
	}
}

func newMapDecoder(t reflect.Type) decoderFunc {
	kt, et := t.Key(), t.Elem()
	dec := typeDecoder(et)
	return func(m *mapper, v *Value, rv reflect.Value) error {
		switch v.kind {
		case KindNull:
			rv.SetZero()
			return nil
		case KindArray, KindObject:
		default:
			return m.typeErr(v, t, "")
		}
		if rv.IsNil() {
			rv.Set(reflect.MakeMapWithSize(t, len(v.ents())))
		}
		m.enter(v)
		ents := v.ents()
		for i := range ents {
			e := &ents[i]
			k, err := m.mapKey(&e.Key, v.kind == KindObject, kt, &e.Value)
			if err != nil {
				return atKey(err, &e.Key)
			}
			ev := reflect.New(et).Elem()
			if err := m.decodeWith(&e.Value, ev, dec); err != nil {
				return atKey(err, &e.Key)
			}
			rv.SetMapIndex(k, ev)
		}
		m.leave()
		return nil
	}
}

func (m *mapper) mapKey(k *Key, prop bool, kt reflect.Type, v *Value) (reflect.Value, error) {
	kv := reflect.New(kt).Elem()
	switch kt.Kind() {
	case reflect.String:
		s := k.String()
		if prop && !k.IsInt() {
			s, _, _ = UnmangleName(k.Str())
		}
		kv.SetString(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := k.phpInt()
		if !ok || kv.OverflowInt(n) {
			return kv, m.typeErr(v, kt, "key "+strconv.Quote(k.String())+" is not a "+kt.String())
		}
		kv.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := k.phpInt()
		if !ok || n < 0 || kv.OverflowUint(uint64(n)) {
			return kv, m.typeErr(v, kt, "key "+strconv.Quote(k.String())+" is not a "+kt.String())
		}
		kv.SetUint(uint64(n))
	case reflect.Interface:
		if k.IsInt() {
			kv.Set(reflect.ValueOf(k.Int()))
		} else {
			kv.Set(reflect.ValueOf(k.Str()))
		}
	default:
		return kv, m.typeErr(v, kt, "unsupported map key type")
	}
	return kv, nil
}
