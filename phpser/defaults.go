package phpser

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// PHP class defaults.
//
// PHP's unserialize() creates an object without running its constructor: every
// property starts at its declared default (`public $tries = 3;`; an untyped
// `public $x;` is null; a typed property without one is uninitialized) and the
// properties in the stream are then set (by __unserialize where the class has one, as
// SerializesModels does). Laravel's SerializesModels leaves out, from 9.4.0 on, every
// property whose value is identical (===) to its declared default, so a 9.4+ command
// only carries what differs from the class. A struct field declares its PHP default
// with a final tag option `default=<JSON literal>`, which Unmarshal gives the field
// when the property is absent, and Encoder uses to leave it out or fill it in.

// ModelSerializer is implemented by struct types that say whether their PHP class
// uses Illuminate\Queue\SerializesModels, whose __serialize (Laravel 9.4+) leaves
// defaulted properties out; Encoder.OmitDefaults follows it. Without the method the
// value given to Marshal is taken to use it (every make:job stub does) and nested
// objects not to (PHP serializes them natively, every property written).
type ModelSerializer interface {
	PHPSerializesModels() bool
}

var modelSerializerType = reflect.TypeFor[ModelSerializer]()

// serializesModels reports what a struct type's PHPSerializesModels says: 1 true,
// 0 false, -1 no such method.
func serializesModels(t reflect.Type) int {
	var m ModelSerializer
	switch {
	case t.Implements(modelSerializerType):
		m = reflect.Zero(t).Interface().(ModelSerializer)
	case reflect.PointerTo(t).Implements(modelSerializerType):
		m = reflect.New(t).Interface().(ModelSerializer)
	default:
		return -1
	}
	if m.PHPSerializesModels() {
		return 1
	}
	return 0
}

// Defaults returns the PHP defaults a struct type declares in its php tags
// (`php:"tries,default=3"`): an object of the type's PHPClass (an array for a type
// without one) holding each field that declares a default, in field order, under the
// name Marshal gives it (protected and private names mangled). It is what PHP's
// unserialize() gives a property the payload leaves out, so that, for example, a
// dispatcher can read a job's `tries` when SerializesModels omitted it. v is a value
// of the struct type or a pointer to one (a nil pointer will do); its fields are not
// read.
func Defaults(v any) (*Value, error) {
	t := reflect.TypeOf(v)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("phpser: Defaults needs a struct or a pointer to one, got %T", v)
	}
	si, err := getStructInfo(t)
	if err != nil {
		return nil, err
	}
	kind := KindObject
	if si.class == "" {
		kind = KindArray
	}
	var ents []Entry
	for i := range si.fields {
		f := &si.fields[i]
		if f.def == nil {
			continue
		}
		var key Key
		switch {
		case kind == KindArray:
			key = arrayKey(f.name)
		case f.vis == Private:
			key = StrKey(MangleName(Private, cmpOr(f.class, si.class), f.name))
		default:
			key = StrKey(MangleName(f.vis, "", f.name))
		}
		ents = append(ents, Entry{Key: key, Value: *f.def})
	}
	out := container(kind, si.class, ents)
	return &out, nil
}

// arrayKey is the key PHP makes of s in an array: canonical decimals are int keys.
func arrayKey(s string) Key {
	if n, ok := canonicalInt(s); ok {
		return IntKey(n)
	}
	return StrKey(s)
}

// parseDefault turns the JSON literal of a default= tag option into the PHP value a
// field of type t declares, or says why t cannot hold it.
func parseDefault(t reflect.Type, lit string) (*Value, error) {
	dec := json.NewDecoder(strings.NewReader(lit))
	dec.UseNumber()
	n, err := readJSON(dec)
	if err != nil {
		return nil, fmt.Errorf("not a JSON literal: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a single JSON literal (default= must be the last tag option)")
	}
	return defaultFor(t, n)
}

// jsonNode is a JSON value with the order of object members kept, which encoding/json's
// maps would lose and PHP's arrays keep.
type jsonNode struct {
	kind  byte // 'n' null, 'b' bool, '0' number, 's' string, '[' array, '{' object
	b     bool
	text  string // number or string
	keys  []string
	items []jsonNode
}

func readJSON(dec *json.Decoder) (jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return jsonNode{}, err
	}
	switch x := tok.(type) {
	case nil:
		return jsonNode{kind: 'n'}, nil
	case bool:
		return jsonNode{kind: 'b', b: x}, nil
	case json.Number:
		return jsonNode{kind: '0', text: string(x)}, nil
	case string:
		return jsonNode{kind: 's', text: x}, nil
	case json.Delim:
		n := jsonNode{kind: byte(x)}
		for dec.More() {
			if x == '{' {
				k, err := dec.Token()
				if err != nil {
					return n, err
				}
				for _, seen := range n.keys {
					if seen == k.(string) {
						return n, fmt.Errorf("duplicate key %q", seen)
					}
				}
				n.keys = append(n.keys, k.(string))
			}
			item, err := readJSON(dec)
			if err != nil {
				return n, err
			}
			n.items = append(n.items, item)
		}
		if _, err := dec.Token(); err != nil { // the closing ] or }
			return n, err
		}
		return n, nil
	}
	return jsonNode{}, fmt.Errorf("unexpected %v", tok)
}

func (n *jsonNode) isFloat() bool { return strings.ContainsAny(n.text, ".eE") }

func (n *jsonNode) describe() string {
	switch n.kind {
	case 'n':
		return "null"
	case 'b':
		return "a bool"
	case '0':
		if n.isFloat() {
			return "the float " + n.text
		}
		return "the int " + n.text
	case 's':
		return "a string"
	case '[', '{':
		if len(n.items) == 0 {
			return "an empty array"
		}
		return "an array"
	}
	return "a value"
}

func cannotHold(t reflect.Type, n *jsonNode, why string) error {
	msg := fmt.Sprintf("a Go %v cannot hold %s", t, n.describe())
	if why != "" {
		msg += " (" + why + ")"
	}
	return errors.New(msg)
}

// defaultFor maps a JSON literal to the PHP value a field of type t holds for it:
// the PHP type follows the Go type (3 into a float64 is the float 3.0), and a literal
// Marshal could never write for that type is an error, since such a field could
// never be identical to its default.
func defaultFor(t reflect.Type, n jsonNode) (*Value, error) {
	if t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType) ||
		reflect.PointerTo(t).Implements(unmarshalerType) {
		// The type writes and reads itself: take the literal as PHP would.
		return genericDefault(n)
	}
	switch t {
	case valuePtrType, valueType:
		return genericDefault(n)
	case timeType:
		return nil, cannotHold(t, &n, "PHP property defaults are constants, never objects")
	case mapType:
		if n.kind != '[' && n.kind != '{' {
			return nil, cannotHold(t, &n, "Marshal writes a Map as an array")
		}
		return genericDefault(n)
	}
	switch t.Kind() {
	case reflect.Pointer:
		if n.kind == 'n' {
			return Null(), nil
		}
		return defaultFor(t.Elem(), n)
	case reflect.Interface:
		if t.NumMethod() == 0 || n.kind == 'n' {
			return genericDefault(n)
		}
		return nil, cannotHold(t, &n, "only the empty interface takes any value")
	case reflect.Bool:
		if n.kind == 'b' {
			return Bool(n.b), nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if n.kind != '0' || n.isFloat() {
			break
		}
		i, err := strconv.ParseInt(n.text, 10, 64)
		if err != nil {
			return nil, cannotHold(t, &n, "out of PHP's int64 range")
		}
		z := reflect.New(t).Elem()
		if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uintptr {
			if i < 0 || z.OverflowUint(uint64(i)) {
				return nil, cannotHold(t, &n, "out of range")
			}
		} else if z.OverflowInt(i) {
			return nil, cannotHold(t, &n, "out of range")
		}
		return Int(i), nil
	case reflect.Float32, reflect.Float64:
		if n.kind != '0' {
			break
		}
		f, err := strconv.ParseFloat(n.text, 64)
		if err != nil {
			return nil, cannotHold(t, &n, "out of float64 range")
		}
		if t.Kind() == reflect.Float32 && float64(float32(f)) != f {
			return nil, cannotHold(t, &n, "not exact in a float32")
		}
		return Float(f), nil
	case reflect.String:
		if n.kind != 's' {
			break
		}
		if enum := phpClassOf(t); enum != "" {
			if !validIdent(n.text) {
				return nil, cannotHold(t, &n, strconv.Quote(n.text)+" is not a case name of enum "+enum)
			}
			return NewEnum(enum, n.text), nil
		}
		return String(n.text), nil
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 && !reflect.PointerTo(t.Elem()).Implements(marshalerType) {
			if n.kind == 's' {
				return String(n.text), nil
			}
			break
		}
		if n.kind == '{' && len(n.items) == 0 {
			n.kind = '['
		}
		if n.kind != '[' {
			break
		}
		if t.Kind() == reflect.Array && len(n.items) != t.Len() {
			return nil, cannotHold(t, &n, "Marshal writes all "+strconv.Itoa(t.Len())+" elements")
		}
		ents := make([]Entry, len(n.items))
		for i, item := range n.items {
			v, err := defaultFor(t.Elem(), item)
			if err != nil {
				return nil, fmt.Errorf("element %d: %w", i, err)
			}
			ents[i] = Entry{Key: IntKey(int64(i)), Value: *v}
		}
		return NewArray(ents...), nil
	case reflect.Map:
		return mapDefault(t, n)
	case reflect.Struct:
		return nil, cannotHold(t, &n, "PHP property defaults are constants, never objects; use a pointer with default=null")
	}
	return nil, cannotHold(t, &n, "")
}

// mapDefault maps a JSON object to the array Marshal writes for a Go map: keys sorted
// as Marshal sorts them, so the literal must list them in that order.
func mapDefault(t reflect.Type, n jsonNode) (*Value, error) {
	if n.kind == '[' && len(n.items) == 0 {
		return NewArray(), nil
	}
	if n.kind != '{' {
		return nil, cannotHold(t, &n, "")
	}
	kt := t.Key()
	ents := make([]Entry, len(n.items))
	for i, item := range n.items {
		k := n.keys[i]
		var key Key
		switch kt.Kind() {
		case reflect.String:
			key = arrayKey(k)
			if i > 0 && n.keys[i-1] >= k {
				return nil, cannotHold(t, &n, "Marshal writes a Go map sorted by key: list the keys in that order")
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			x, ok := canonicalInt(k)
			if !ok {
				return nil, cannotHold(t, &n, "key "+strconv.Quote(k)+" is not an int")
			}
			if kv := reflect.New(kt).Elem(); (kt.Kind() >= reflect.Uint && (x < 0 || kv.OverflowUint(uint64(x)))) ||
				(kt.Kind() < reflect.Uint && kv.OverflowInt(x)) {
				return nil, cannotHold(t, &n, "key "+k+" out of range")
			}
			key = IntKey(x)
			if i > 0 && ents[i-1].Key.Int() >= x {
				return nil, cannotHold(t, &n, "Marshal writes a Go map sorted by key: list the keys in that order")
			}
		default:
			return nil, cannotHold(t, &n, "map keys must be strings or integers")
		}
		v, err := defaultFor(t.Elem(), item)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		ents[i] = Entry{Key: key, Value: *v}
	}
	return NewArray(ents...), nil
}

// genericDefault maps a JSON literal as an `any` holds it: integers are PHP ints,
// numbers with a fraction or exponent PHP floats, arrays and objects PHP arrays (with
// canonical decimal keys as int keys, as PHP makes them).
func genericDefault(n jsonNode) (*Value, error) {
	switch n.kind {
	case 'n':
		return Null(), nil
	case 'b':
		return Bool(n.b), nil
	case '0':
		if n.isFloat() {
			f, err := strconv.ParseFloat(n.text, 64)
			if err != nil {
				return nil, fmt.Errorf("float %s out of range", n.text)
			}
			return Float(f), nil
		}
		i, err := strconv.ParseInt(n.text, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("integer %s out of PHP's int64 range", n.text)
		}
		return Int(i), nil
	case 's':
		return String(n.text), nil
	}
	ents := make([]Entry, len(n.items))
	for i, item := range n.items {
		v, err := genericDefault(item)
		if err != nil {
			return nil, err
		}
		key := IntKey(int64(i))
		if n.kind == '{' {
			key = arrayKey(n.keys[i])
			for _, e := range ents[:i] {
				if e.Key == key {
					return nil, fmt.Errorf("keys %q and %s are the same PHP array key", n.keys[i], e.Key.String())
				}
			}
		}
		ents[i] = Entry{Key: key, Value: *v}
	}
	return NewArray(ents...), nil
}

// Identical is PHP's === between two values that hold no objects or references, such
// as a property's value and its declared default (what SerializesModels compares from
// Laravel 9.4 on): same type and value; floats compare as numbers (0.0 === -0.0,
// NAN !== NAN); arrays have the same keys in the same order with identical values.
// Objects and references are never identical here. A nil Value is PHP null.
func Identical(a, b *Value) bool {
	if a == nil {
		a = Null()
	}
	if b == nil {
		b = Null()
	}
	return identical(a, b)
}

// identical is PHP's === between a value Marshal wrote and a declared default (which
// holds no objects or references): same type and value; floats compare as numbers
// (0.0 === -0.0, NAN !== NAN); arrays have the same keys in the same order with
// identical values.
func identical(a, b *Value) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case KindNull:
		return true
	case KindBool, KindInt:
		return a.num == b.num
	case KindFloat:
		return a.Float() == b.Float()
	case KindString, KindEnum:
		return a.str == b.str
	case KindArray:
		ae, be := a.ents(), b.ents()
		if len(ae) != len(be) {
			return false
		}
		for i := range ae {
			ka, ia := ae[i].Key.phpInt()
			kb, ib := be[i].Key.phpInt()
			if ia != ib || (ia && ka != kb) || (!ia && ae[i].Key.Str() != be[i].Key.Str()) {
				return false
			}
			if !identical(&ae[i].Value, &be[i].Value) {
				return false
			}
		}
		return true
	}
	return false // objects are identical only to themselves, and defaults hold none
}

// identicalBytes reports whether written, the bytes Marshal wrote for a property, is
// identical to its default def (whose own encoding is defBytes). Equal bytes are;
// different bytes may still be (d:-0; is === d:0;, a *Value may spell i:+5;), which
// decoding settles, but only where the first byte and an array's count allow it.
func identicalBytes(written, defBytes []byte, def *Value) bool {
	if bytes.Equal(written, defBytes) {
		return true
	}
	if len(written) == 0 || len(defBytes) == 0 || written[0] != defBytes[0] {
		return false
	}
	switch written[0] {
	case 'i', 'd':
	case 'a':
		// Same count, or the arrays differ.
		wc, _, _ := strings.Cut(string(written[2:min(len(written), 24)]), ":")
		dc, _, _ := strings.Cut(string(defBytes[2:min(len(defBytes), 24)]), ":")
		if wc != dc {
			return false
		}
	default:
		return false // N; b: s: E: have one spelling each
	}
	v, err := DecodeString(string(written))
	return err == nil && identical(v, def)
}

// declaredDefault parses a field's default= literal, in an error naming the struct
// type and field.
func declaredDefault(st reflect.Type, sf reflect.StructField, lit string) (*Value, []byte, error) {
	fail := func(msg string) error {
		return fmt.Errorf("phpser: field %s of %v: default=%s: %s", sf.Name, st, lit, msg)
	}
	if lit == "" {
		return nil, nil, fail("the literal is missing (write default=null, default=0, default=\"\", default=[] ...)")
	}
	v, err := parseDefault(sf.Type, lit)
	if err != nil {
		return nil, nil, fail(err.Error())
	}
	b, err := Encode(v)
	if err != nil {
		return nil, nil, fail(err.Error())
	}
	return v, b, nil
}
