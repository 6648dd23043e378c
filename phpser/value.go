package phpser

import (
	"math"
	"strconv"
	"strings"
	"unsafe"

	"github.com/laraq/laraq/internal/php"
)

// Kind is the type of a serialized PHP value: one per form of PHP's serialize() output.
type Kind uint8

const (
	KindNull   Kind = iota // N;
	KindBool               // b:0; b:1;
	KindInt                // i:<int64>;
	KindFloat              // d:<float>; including INF, -INF, NAN
	KindString             // s:<len>:"<bytes>";
	KindArray              // a:<n>:{<key><value>...}
	KindObject             // O:<len>:"<class>":<n>:{<name><value>...}
	KindCustom             // C:<len>:"<class>":<len>:{<data>} (Serializable)
	KindEnum               // E:<len>:"<class>:<case>"; (PHP 8.1 enums)
	KindRef                // r:<n>; (object handle) or R:<n>; (PHP & reference)
)

var kindNames = [...]string{"null", "bool", "int", "float", "string", "array", "object", "custom", "enum", "ref"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

const (
	flagHardRef uint8 = 1 << iota // R: rather than r:
	flagHasOff                    // off holds the value's byte offset in the decoded input
)

// Value is one node of a decoded (or built) PHP value tree. The zero Value is PHP null.
//
// A Value is small and kept inline: arrays and objects hold their entries in one
// slice, strings and class names share the decoded input's single copy, so a whole
// payload decodes into a couple of allocations. Values are meant to be read, not
// mutated; build new ones with the constructors (Int, String, NewArray, NewObject, ...).
type Value struct {
	kind  Kind
	flags uint8
	off   uint32 // byte offset of the value in the decoded input (flagHasOff)
	num   int64  // bool 0/1, int, float bits, ref index, custom class length, entry count
	str   string // string bytes; class; "Class:Case"; class+data for C:; raw number text
	// p is the first of num entries for arrays and objects, the resolved target for
	// references. One untyped pointer instead of a slice and a *Value keeps a Value
	// at 40 bytes: payloads are mostly small entries, and their size is what the
	// decoder allocates and the GC scans.
	p unsafe.Pointer
}

// ents returns the entries of an array or object (nil for other kinds).
func (v *Value) ents() []Entry {
	if v.p == nil || (v.kind != KindArray && v.kind != KindObject) {
		return nil
	}
	return unsafe.Slice((*Entry)(v.p), v.num)
}

// setEnts makes e the entries of an array or object.
func (v *Value) setEnts(e []Entry) {
	v.num = int64(len(e))
	v.p = nil
	if len(e) > 0 {
		v.p = unsafe.Pointer(unsafe.SliceData(e))
	}
}

// target returns the resolved target of a reference.
func (v *Value) target() *Value {
	if v.kind != KindRef {
		return nil
	}
	return (*Value)(v.p)
}

func container(kind Kind, class string, e []Entry) Value {
	v := Value{kind: kind, str: class}
	v.setEnts(e)
	return v
}

// Entry is one key/value pair of an array or object, in stream order. Object keys are
// property names, mangled the way PHP writes them (see UnmangleName).
type Entry struct {
	Key   Key
	Value Value
}

// Key is an array key or property name: an int (i:) or a string (s:). PHP keeps the
// two apart in the stream, so Key does too.
//
// Every entry of a decoded tree holds one, so a Key is two words and an int, not
// three words with a flag: n is 0 for string keys and holds the int of an int key,
// except int key 0, which is s "0" with n 1 (intZero). Each key still has exactly one
// representation, so == on keys keeps meaning "the same key".
type Key struct {
	s string
	n int64
}

// intZero is IntKey(0): the one int key whose n cannot be its value.
var intZero = Key{s: "0", n: 1}

// IntKey returns an int key (written as i:N;).
func IntKey(n int64) Key {
	if n == 0 {
		return intZero
	}
	return Key{n: n}
}

// StrKey returns a string key (written as s:len:"...";).
func StrKey(s string) Key { return Key{s: s} }

// IsInt reports whether the key is an int key.
func (k Key) IsInt() bool { return k.n != 0 }

// Int returns an int key's value (0 for string keys).
func (k Key) Int() int64 {
	if k.s != "" {
		return 0
	}
	return k.n
}

// Str returns a string key's bytes ("" for int keys).
func (k Key) Str() string {
	if k.n != 0 {
		return ""
	}
	return k.s
}

// String returns the key as text: a string key as is, an int key in decimal.
func (k Key) String() string {
	if k.n != 0 {
		return strconv.FormatInt(k.Int(), 10)
	}
	return k.s
}

// Name splits a property name into its plain name, visibility and (for private
// properties) the declaring class. Int keys come back as their decimal text.
func (k Key) Name() (name string, vis Visibility, class string) {
	if k.n != 0 {
		return strconv.FormatInt(k.Int(), 10), Public, ""
	}
	return UnmangleName(k.s)
}

// plain returns the property name without visibility prefix (int keys in decimal).
func (k *Key) plain() string {
	if k.n != 0 {
		return strconv.FormatInt(k.Int(), 10)
	}
	if len(k.s) == 0 || k.s[0] != 0 {
		return k.s
	}
	n, _, _ := UnmangleName(k.s)
	return n
}

// phpInt reports the int a key stands for under PHP's array-key rule: int keys, and
// string keys that are canonical decimal integers ("10", "-3"; not "007", "-0", "+1").
func (k Key) phpInt() (int64, bool) {
	if k.n != 0 {
		return k.Int(), true
	}
	return canonicalInt(k.s)
}

// canonicalInt implements ZEND_HANDLE_NUMERIC_STR: the strings PHP turns into int keys.
func canonicalInt(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	i := 0
	if s[0] == '-' {
		i = 1
		if len(s) == 1 {
			return 0, false
		}
	}
	if s[i] == '0' && (len(s) > i+1 || i == 1) {
		return 0, false
	}
	for j := i; j < len(s); j++ {
		if s[j] < '0' || s[j] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// Visibility of an object property.
type Visibility uint8

const (
	Public    Visibility = iota // plain name
	Protected                   // "\0*\0name"
	Private                     // "\0Class\0name"
)

func (v Visibility) String() string {
	switch v {
	case Protected:
		return "protected"
	case Private:
		return "private"
	}
	return "public"
}

// MangleName returns a property name as PHP writes it: name for public, "\0*\0name" for
// protected, "\0Class\0name" for private (class is the declaring class).
func MangleName(vis Visibility, class, name string) string {
	switch vis {
	case Protected:
		return "\x00*\x00" + name
	case Private:
		return "\x00" + class + "\x00" + name
	}
	return name
}

// UnmangleName splits a property name as PHP writes it into the plain name, its
// visibility and, for private properties, the declaring class. A name that starts with
// NUL but has no class between the NULs (PHP calls it corrupt) is returned whole as
// public.
func UnmangleName(s string) (name string, vis Visibility, class string) {
	if len(s) == 0 || s[0] != 0 {
		return s, Public, ""
	}
	i := strings.IndexByte(s[1:], 0)
	if i <= 0 {
		return s, Public, ""
	}
	class = s[1 : 1+i]
	name = s[2+i:]
	if class == "*" {
		return name, Protected, ""
	}
	return name, Private, class
}

// Kind returns the value's kind.
func (v *Value) Kind() Kind { return v.kind }

// IsNull reports whether v is PHP null.
func (v *Value) IsNull() bool { return v.kind == KindNull }

// Bool returns a bool's value (false for other kinds).
func (v *Value) Bool() bool { return v.kind == KindBool && v.num != 0 }

// Int returns an int's value (0 for other kinds).
func (v *Value) Int() int64 {
	if v.kind != KindInt {
		return 0
	}
	return v.num
}

// Float returns a float's value (0 for other kinds).
func (v *Value) Float() float64 {
	if v.kind != KindFloat {
		return 0
	}
	return math.Float64frombits(uint64(v.num))
}

// Str returns a string's bytes ("" for other kinds). Decoded strings share the
// decoded input's copy; they are never modified.
func (v *Value) Str() string {
	if v.kind != KindString {
		return ""
	}
	return v.str
}

// String returns a string's bytes for KindString and a short description for the
// other kinds, e.g. "int(5)" or "object(App\Jobs\X)", like reflect.Value.String.
func (v *Value) String() string {
	switch v.kind {
	case KindString:
		return v.str
	case KindNull:
		return "null"
	case KindBool:
		return strconv.FormatBool(v.num != 0)
	case KindInt:
		return "int(" + strconv.FormatInt(v.num, 10) + ")"
	case KindFloat:
		return "float(" + string(appendFloat(nil, v.Float())) + ")"
	case KindArray:
		return "array(" + strconv.Itoa(len(v.ents())) + ")"
	case KindObject, KindCustom:
		return v.kind.String() + "(" + v.Class() + ")"
	case KindEnum:
		return "enum(" + v.str + ")"
	case KindRef:
		if v.flags&flagHardRef != 0 {
			return "R:" + strconv.FormatInt(v.num, 10)
		}
		return "r:" + strconv.FormatInt(v.num, 10)
	}
	return v.kind.String()
}

// Class returns the class name of an object, a custom (C:) object or an enum ("" for
// other kinds).
func (v *Value) Class() string {
	switch v.kind {
	case KindObject:
		return v.str
	case KindCustom:
		return v.str[:v.num]
	case KindEnum:
		return v.EnumClass()
	}
	return ""
}

// CustomData returns the raw payload of a C: value: what the class' Serializable::serialize
// returned. PHP does not define its format.
func (v *Value) CustomData() string {
	if v.kind != KindCustom {
		return ""
	}
	return v.str[v.num:]
}

// Enum returns an enum's "Class:Case" text as serialized.
func (v *Value) Enum() string {
	if v.kind != KindEnum {
		return ""
	}
	return v.str
}

// EnumClass returns an enum's class.
func (v *Value) EnumClass() string {
	if v.kind != KindEnum {
		return ""
	}
	if i := strings.IndexByte(v.str, ':'); i >= 0 {
		return v.str[:i]
	}
	return v.str
}

// EnumCase returns an enum's case name (for backed enums too: serialize() writes the
// case name, never the backing value).
func (v *Value) EnumCase() string {
	if v.kind != KindEnum {
		return ""
	}
	if i := strings.IndexByte(v.str, ':'); i >= 0 {
		return v.str[i+1:]
	}
	return ""
}

// Entries returns the key/value pairs of an array or object in stream order (nil for
// other kinds). The slice belongs to v: read it, do not modify it.
func (v *Value) Entries() []Entry {
	if v.kind != KindArray && v.kind != KindObject {
		return nil
	}
	return v.ents()
}

// Len returns the number of entries of an array or object, 0 otherwise.
func (v *Value) Len() int { return len(v.Entries()) }

// Index returns the value of the i-th entry of an array or object (in stream order).
func (v *Value) Index(i int) *Value {
	e := v.Entries()
	if i < 0 || i >= len(e) {
		return nil
	}
	return &e[i].Value
}

// Prop returns the first property of an object whose plain name (visibility prefix
// removed) is name, whatever its visibility. For arrays it looks up a string key, or
// an int key when name is a canonical decimal. References are followed.
func (v *Value) Prop(name string) (*Value, bool) {
	d := v.Deref()
	if d == nil {
		return nil, false
	}
	ents := d.ents()
	switch d.kind {
	case KindObject:
		if i, ok := PropIndex(ents, name); ok {
			return &ents[i].Value, true
		}
	case KindArray:
		n, isNum := canonicalInt(name)
		for i := range ents {
			k := &ents[i].Key
			if (k.IsInt() && isNum && k.Int() == n) || (!k.IsInt() && k.Str() == name) {
				return &ents[i].Value, true
			}
		}
	}
	return nil, false
}

// PropIndex returns the index in ents, an object's entries, of the property whose plain
// name (visibility mangling removed) is name: a class declares one property of a name,
// whatever its visibility, so this is how every caller finds one by name.
func PropIndex(ents []Entry, name string) (int, bool) {
	for i := range ents {
		k := &ents[i].Key
		if k.IsInt() {
			if n, ok := canonicalInt(name); ok && n == k.Int() {
				return i, true
			}
			continue
		}
		if k.Str() == name || (len(k.Str()) > 0 && k.Str()[0] == 0 && plainName(k.Str()) == name) {
			return i, true
		}
	}
	return -1, false
}

// Visible returns the property name as code outside the object's class reads it: a
// public property only, and null counting as absent (`$object->name ?? …`), which is
// how Laravel's Queue and Bus read a job's metadata.
func (v *Value) Visible(name string) (*Value, bool) {
	for _, e := range v.Entries() {
		if e.Key.IsInt() {
			continue
		}
		n, vis, _ := e.Key.Name()
		if n != name || vis != Public {
			continue
		}
		x := e.Value.Deref()
		if x == nil || x.IsNull() {
			return nil, false
		}
		return x, true
	}
	return nil, false
}

func plainName(s string) string {
	n, _, _ := UnmangleName(s)
	return n
}

// Lookup returns the value stored under exactly this key (mangled name for objects).
func (v *Value) Lookup(k Key) (*Value, bool) {
	ents := v.Entries()
	for i := range ents {
		if ents[i].Key == k {
			return &ents[i].Value, true
		}
	}
	return nil, false
}

// RefIndex returns the 1-based value index a reference points to (0 for other kinds).
func (v *Value) RefIndex() int {
	if v.kind != KindRef {
		return 0
	}
	return int(v.num)
}

// IsReference reports whether v is an R: reference (a PHP & reference shared by two
// variables) rather than an r: object handle.
func (v *Value) IsReference() bool { return v.kind == KindRef && v.flags&flagHardRef != 0 }

// Target returns the value a decoded reference points to (nil when v is not a
// reference or was built by hand and never resolved).
func (v *Value) Target() *Value {
	if v.kind != KindRef {
		return nil
	}
	return (*Value)(v.p)
}

// Deref follows references and returns the value they point to (v itself when v is
// not a reference; nil for an unresolved reference).
func (v *Value) Deref() *Value {
	for i := 0; v != nil && v.kind == KindRef; i++ {
		if i > 64 { // refs resolve to non-refs when decoded; guard hand-built loops
			return nil
		}
		v = v.target()
	}
	return v
}

// Offset returns the byte offset of v in the input it was decoded from.
func (v *Value) Offset() (int, bool) { return int(v.off), v.flags&flagHasOff != 0 }

// Null returns a PHP null.
func Null() *Value { return &Value{} }

// Bool returns a PHP bool.
func Bool(b bool) *Value {
	v := &Value{kind: KindBool}
	if b {
		v.num = 1
	}
	return v
}

// Int returns a PHP int.
func Int(n int64) *Value { return &Value{kind: KindInt, num: n} }

// Float returns a PHP float.
func Float(f float64) *Value { return &Value{kind: KindFloat, num: int64(math.Float64bits(f))} }

// String returns a PHP string holding the bytes of s.
func String(s string) *Value { return &Value{kind: KindString, str: s} }

// NewArray returns a PHP array with the given entries, in order.
func NewArray(entries ...Entry) *Value {
	v := container(KindArray, "", entries)
	return &v
}

// List returns a PHP list: an array with keys 0..n-1.
func List(values ...*Value) *Value {
	ents := make([]Entry, len(values))
	for i, x := range values {
		ents[i] = Entry{Key: IntKey(int64(i)), Value: *x}
	}
	v := container(KindArray, "", ents)
	return &v
}

// NewObject returns an object of the given class with the given properties (use
// PublicProp, ProtectedProp and PrivateProp to name them).
func NewObject(class string, props ...Entry) *Value {
	v := container(KindObject, class, props)
	return &v
}

// NewCustom returns a C: object: class plus the raw data its Serializable::unserialize
// will get.
func NewCustom(class, data string) *Value {
	return &Value{kind: KindCustom, str: class + data, num: int64(len(class))}
}

// NewEnum returns an enum case (E:"Class:Case").
func NewEnum(class, caseName string) *Value {
	return &Value{kind: KindEnum, str: class + ":" + caseName}
}

// NewRef returns an r: reference to the value with the given 1-based index: the same
// object instance again.
func NewRef(index int) *Value { return &Value{kind: KindRef, num: int64(index)} }

// NewHardRef returns an R: reference: a PHP & reference to the value with the given
// 1-based index.
func NewHardRef(index int) *Value {
	return &Value{kind: KindRef, num: int64(index), flags: flagHardRef}
}

// IntEntry returns an array entry with an int key.
func IntEntry(k int64, v *Value) Entry { return Entry{Key: IntKey(k), Value: *v} }

// StrEntry returns an array entry with a string key.
func StrEntry(k string, v *Value) Entry { return Entry{Key: StrKey(k), Value: *v} }

// PublicProp returns a public property entry.
func PublicProp(name string, v *Value) Entry { return Entry{Key: StrKey(name), Value: *v} }

// ProtectedProp returns a protected property entry ("\0*\0name").
func ProtectedProp(name string, v *Value) Entry {
	return Entry{Key: StrKey(MangleName(Protected, "", name)), Value: *v}
}

// PrivateProp returns a private property entry ("\0Class\0name"); class is the class
// that declares the property.
func PrivateProp(class, name string, v *Value) Entry {
	return Entry{Key: StrKey(MangleName(Private, class, name)), Value: *v}
}

// Append adds entries to an array or object. It never writes into storage shared
// with another Value.
func (v *Value) Append(entries ...Entry) {
	if v.kind != KindArray && v.kind != KindObject {
		return
	}
	e := v.ents()
	v.setEnts(append(e[:len(e):len(e)], entries...))
}

// AppendProp adds a property with the given visibility to an object; a private
// property is declared by the object's own class.
func (v *Value) AppendProp(vis Visibility, name string, x *Value) {
	v.Append(Entry{Key: StrKey(MangleName(vis, v.Class(), name)), Value: *x})
}

// Equal reports whether a and b are the same PHP value tree: same kinds, scalars,
// classes, keys and order. Number spelling, offsets and resolved targets are ignored
// (references compare by index). NaN equals NaN. Trees nested deeper than
// MaxDepthCeiling, which Decode never builds, are not walked and compare unequal.
func Equal(a, b *Value) bool { return equal(a, b, 0) }

func equal(a, b *Value, depth int) bool {
	if a.kind != b.kind || depth > MaxDepthCeiling {
		return false
	}
	switch a.kind {
	case KindNull:
		return true
	case KindBool, KindInt:
		return a.num == b.num
	case KindFloat:
		return a.num == b.num || (math.IsNaN(a.Float()) && math.IsNaN(b.Float()))
	case KindString, KindEnum:
		return a.str == b.str
	case KindCustom:
		return a.str == b.str && a.num == b.num
	case KindRef:
		return a.num == b.num && a.flags&flagHardRef == b.flags&flagHardRef
	case KindArray, KindObject:
		if a.str != b.str || len(a.ents()) != len(b.ents()) {
			return false
		}
		ae, be := a.ents(), b.ents()
		for i := range ae {
			if ae[i].Key != be[i].Key || !equal(&ae[i].Value, &be[i].Value, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

// Truthy is PHP's conversion to bool (what `if ($v)`, `?:` and empty() see): false for
// null, false, 0, 0.0, "", "0" and an empty array, true otherwise; a nil Value is null.
func (v *Value) Truthy() bool {
	if v == nil {
		return false
	}
	switch v.Kind() {
	case KindNull:
		return false
	case KindBool:
		return v.Bool()
	case KindInt:
		return v.Int() != 0
	case KindFloat:
		return v.Float() != 0
	case KindString:
		return v.Str() != "" && v.Str() != "0"
	case KindArray:
		return v.Len() > 0
	}
	return true
}

// StringCast is PHP's (string) of a scalar, as string concatenation and implode apply
// it: null and false "", true "1", floats with precision 14 ("1.5", "1.0E+25"). ok is
// false for an array or object, which PHP does not convert (concatenation writes
// "Array" with a warning, an object without __toString throws).
func (v *Value) StringCast() (s string, ok bool) {
	v = v.Deref()
	if v == nil {
		return "", true
	}
	switch v.Kind() {
	case KindNull:
		return "", true
	case KindBool:
		if v.Bool() {
			return "1", true
		}
		return "", true
	case KindInt:
		return strconv.FormatInt(v.Int(), 10), true
	case KindFloat:
		return php.FloatString(v.Float()), true
	case KindString:
		return v.Str(), true
	case KindArray:
		return "Array", false
	}
	return "", false
}
