package phpser

import "strconv"

// Object is how an object decodes into an `any`: its class and its properties by
// plain name (visibility dropped). Marshal writes it back as an object with the
// properties sorted by name; names that carry PHP's NUL mangling are written as is.
type Object struct {
	Class string
	Props map[string]any
}

// EnumCase is how a PHP enum case decodes into an `any`; Marshal writes it as E:.
type EnumCase struct {
	Class string
	Case  string
}

// Custom is how a C: object (a Serializable class) decodes into an `any`: the class
// and the raw data its serialize() method produced. Marshal writes it back as C:.
type Custom struct {
	Class string
	Data  string
}

// Map is a PHP array (or an object's properties) with PHP's order and key types:
// Unmarshal fills it in stream order, Marshal writes the items in slice order. Use it
// where a plain Go map would lose something (order, int vs string keys); values are
// decoded as for `any`.
type Map []MapItem

// MapItem is one key/value pair of a Map.
type MapItem struct {
	Key   Key
	Value any
}

// Get returns the value of the first item whose key reads as key (see Key.String);
// for object properties the key is matched with its visibility prefix removed.
func (m Map) Get(key string) (any, bool) {
	for _, it := range m {
		if it.Key.String() == key {
			return it.Value, true
		}
		if !it.Key.IsInt() && len(it.Key.Str()) > 0 && it.Key.Str()[0] == 0 && plainName(it.Key.Str()) == key {
			return it.Value, true
		}
	}
	return nil, false
}

// isList reports whether an array's keys are 0..n-1 in order (PHP's array_is_list),
// counting numeric string keys as PHP does.
func isList(ents []Entry) bool {
	for i := range ents {
		n, ok := ents[i].Key.phpInt()
		if !ok || n != int64(i) {
			return false
		}
	}
	return true
}

// toAny converts a value to the generic Go form documented on Value.Decode.
func (m *mapper) toAny(v *Value) (any, error) {
	if v.kind == KindRef {
		t, ok, err := m.follow(v)
		if err != nil || !ok {
			return nil, err
		}
		if len(m.active) > maxNesting {
			return nil, m.typeErr(v, nil, "reference is "+strconv.Itoa(len(m.active))+" levels deep; references are followed only up to "+strconv.Itoa(maxNesting))
		}
		m.inRef++
		x, err := m.toAny(t)
		m.inRef--
		return x, err
	}
	if m.inRef > 0 {
		if err := m.count(v); err != nil {
			return nil, err
		}
	}
	switch v.kind {
	case KindNull:
		return nil, nil
	case KindBool:
		return v.num != 0, nil
	case KindInt:
		return v.num, nil
	case KindFloat:
		return v.Float(), nil
	case KindString:
		return v.str, nil
	case KindEnum:
		return EnumCase{Class: v.EnumClass(), Case: v.EnumCase()}, nil
	case KindCustom:
		return Custom{Class: v.Class(), Data: v.CustomData()}, nil
	case KindArray:
		m.enter(v)
		ents := v.ents()
		if isList(ents) {
			out := make([]any, len(ents))
			for i := range ents {
				x, err := m.toAny(&ents[i].Value)
				if err != nil {
					return nil, at(err, pathElem{index: int64(i), isIdx: true})
				}
				out[i] = x
			}
			m.leave()
			return out, nil
		}
		out := make(map[string]any, len(ents))
		for i := range ents {
			e := &ents[i]
			x, err := m.toAny(&e.Value)
			if err != nil {
				return nil, atKey(err, &e.Key)
			}
			out[e.Key.String()] = x
		}
		m.leave()
		return out, nil
	case KindObject:
		m.enter(v)
		ents := v.ents()
		props := make(map[string]any, len(ents))
		for i := range ents {
			e := &ents[i]
			x, err := m.toAny(&e.Value)
			if err != nil {
				return nil, atKey(err, &e.Key)
			}
			props[e.Key.plain()] = x
		}
		m.leave()
		return Object{Class: v.str, Props: props}, nil
	}
	return nil, m.typeErr(v, anyType, "unknown kind")
}
