package phpser

import (
	"fmt"
	"reflect"
)

// Field is how Marshal and Unmarshal map one field of a struct type to a PHP property,
// as the struct's php tags say: a read-only view for tools that compare a Go type with
// its PHP class (package phpclass), so that they read the tags exactly as the codec does.
type Field struct {
	// Name is the plain PHP property name: the tag's name, else the Go field's name.
	Name string
	// GoName is the Go field's name; Index reaches it (reflect.Value.FieldByIndex).
	GoName string
	Index  []int
	Type   reflect.Type
	// Via are the embedded struct types the field is promoted through, outermost first
	// (none for a field of the struct itself).
	Via []reflect.Type
	// Visibility is the visibility Marshal writes; Class, for a private property, the
	// declaring class its name is mangled with: the tag's private=Class, else the
	// PHPClass of the embedded struct it comes from, else the struct's own ("" when the
	// struct has none).
	Visibility Visibility
	Class      string
	// Tagged: the name comes from a php tag and is matched exactly; an untagged field's
	// Go name takes a property of any case when no field matches exactly, but Marshal
	// writes the Go name as it is.
	Tagged    bool
	OmitEmpty bool
	// Rest: the field takes every property no other field takes (`php:",rest"`).
	Rest bool
	// ObjClass is the class= option: the class Marshal writes for a struct or time value.
	ObjClass string
	// Default is the declared default (default=), nil when the field declares none. It
	// is shared: read it, do not change it.
	Default *Value
}

// Fields returns the fields of struct type t (a pointer is followed) that map to PHP
// properties, in the order Marshal writes them, after the same tag parsing and embedding
// rules as Marshal and Unmarshal; an error is the one they would report for the type.
func Fields(t reflect.Type) ([]Field, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("phpser: Fields needs a struct type, got %v", t)
	}
	si, err := getStructInfo(t)
	if err != nil {
		return nil, err
	}
	out := make([]Field, len(si.fields))
	for i := range si.fields {
		f := &si.fields[i]
		var via []reflect.Type
		st := t
		for _, x := range f.index[:len(f.index)-1] {
			st = st.Field(x).Type
			if st.Kind() == reflect.Pointer {
				st = st.Elem()
			}
			via = append(via, st)
		}
		out[i] = Field{
			Name:       f.name,
			GoName:     st.Field(f.index[len(f.index)-1]).Name,
			Index:      append([]int(nil), f.index...),
			Type:       f.typ,
			Via:        via,
			Visibility: f.vis,
			Class:      f.class,
			Tagged:     f.tagged,
			OmitEmpty:  f.omitEmpty,
			Rest:       f.rest,
			ObjClass:   f.objClass,
			Default:    f.def,
		}
		if f.vis != Private {
			out[i].Class = ""
		}
	}
	return out, nil
}

// SerializesModels reports what struct type t says of its PHP class through
// ModelSerializer: whether it uses SerializesModels (ok false when t has no
// PHPSerializesModels method).
func SerializesModels(t reflect.Type) (uses, ok bool) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return false, false
	}
	switch serializesModels(t) {
	case 1:
		return true, true
	case 0:
		return false, true
	}
	return false, false
}
