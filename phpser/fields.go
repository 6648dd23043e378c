package phpser

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Classer is implemented by Go types that stand for a PHP class. On a struct type it
// names the class Marshal writes (O:); on a string type it names a PHP enum, and
// Marshal writes the string as that enum's case (E:). The method is called once per
// type, on the zero value, so it must return a constant.
type Classer interface {
	PHPClass() string
}

// Marshaler is implemented by types that build their own PHP value.
type Marshaler interface {
	MarshalPHP() (*Value, error)
}

// Unmarshaler is implemented by types that read their own PHP value. v has references
// followed already; it stays valid after the call and may be retained.
type Unmarshaler interface {
	UnmarshalPHP(v *Value) error
}

var (
	classerType     = reflect.TypeFor[Classer]()
	marshalerType   = reflect.TypeFor[Marshaler]()
	unmarshalerType = reflect.TypeFor[Unmarshaler]()
)

// field is one struct field that maps to a PHP property.
type field struct {
	name      string     // plain PHP property name
	vis       Visibility // visibility Marshal writes
	class     string     // declaring class of a private property
	index     []int
	typ       reflect.Type
	tagged    bool   // name came from a tag (exact match only)
	omitEmpty bool   // Marshal skips zero values
	rest      bool   // catch-all for properties no other field takes
	objClass  string // class= : class Marshal writes for this field's struct/time value
	key       []byte // the serialized property name, ready to append
	depth     int
	pos       int    // index in structInfo.fields
	unique    bool   // no other field has this plain name
	def       *Value // the PHP default declared with default=, nil if none
	defBytes  []byte // def encoded
}

// structInfo is the PHP view of a struct type, built once and cached.
type structInfo struct {
	class  string // the type's PHPClass(), "" if none
	fields []field
	byName map[string][]int // plain name -> fields
	fold   map[string]int   // lower-cased plain name -> untagged field
	rest   int              // index of the rest field, -1 if none
	defs   []int            // fields that declare a PHP default
	err    error            // why the type cannot be mapped; cached like the rest
}

var structCache sync.Map // reflect.Type -> *structInfo

// phpClassOf returns the PHP class a type declares through Classer, "" when none.
func phpClassOf(t reflect.Type) string {
	if t.Implements(classerType) {
		if t.Kind() == reflect.Pointer {
			return reflect.New(t.Elem()).Interface().(Classer).PHPClass()
		}
		return reflect.Zero(t).Interface().(Classer).PHPClass()
	}
	if reflect.PointerTo(t).Implements(classerType) {
		return reflect.New(t).Interface().(Classer).PHPClass()
	}
	return ""
}

var classCache sync.Map // reflect.Type -> string

func cachedClassOf(t reflect.Type) string {
	if c, ok := classCache.Load(t); ok {
		return c.(string)
	}
	c := phpClassOf(t)
	classCache.Store(t, c)
	return c
}

func getStructInfo(t reflect.Type) (*structInfo, error) {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo), si.(*structInfo).err
	}
	si, err := buildStructInfo(t)
	if err != nil {
		si = &structInfo{err: err}
	}
	actual, _ := structCache.LoadOrStore(t, si)
	si = actual.(*structInfo)
	return si, si.err
}

func buildStructInfo(t reflect.Type) (*structInfo, error) {
	si := &structInfo{class: phpClassOf(t), byName: map[string][]int{}, fold: map[string]int{}, rest: -1}
	if err := si.collect(t, nil, si.class, 0, map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	// A name defined at a shallower embedding depth hides deeper ones with the same
	// mangled name, as Go's own field promotion does.
	seen := map[string]int{}
	kept := si.fields[:0]
	for _, f := range si.fields {
		k := MangleName(f.vis, f.class, f.name)
		if f.rest {
			k = "\x00rest"
		}
		if d, ok := seen[k]; ok && d <= f.depth {
			continue
		}
		seen[k] = f.depth
		kept = append(kept, f)
	}
	si.fields = kept
	for i := range si.fields {
		f := &si.fields[i]
		f.pos = i
		if f.rest {
			if si.rest >= 0 {
				return nil, fmt.Errorf("phpser: %v has two rest fields", t)
			}
			si.rest = i
			continue
		}
		si.byName[f.name] = append(si.byName[f.name], i)
		if !f.tagged {
			if _, dup := si.fold[strings.ToLower(f.name)]; !dup {
				si.fold[strings.ToLower(f.name)] = i
			}
		}
		f.key = append(appendLenQuoted(nil, "s:", MangleName(f.vis, f.class, f.name)), ';')
		if f.def != nil {
			si.defs = append(si.defs, i)
		}
	}
	for i := range si.fields {
		f := &si.fields[i]
		f.unique = !f.rest && len(si.byName[f.name]) == 1
	}
	return si, nil
}

func (si *structInfo) collect(t reflect.Type, index []int, declClass string, depth int, visiting map[reflect.Type]bool) error {
	if visiting[t] {
		return nil
	}
	visiting[t] = true
	defer delete(visiting, t)
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, hasTag := sf.Tag.Lookup("php")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		// default= is the last option and takes the rest of the tag, commas and all:
		// `php:"options,private,default={\"a\":1,\"b\":2}"`.
		lit, hasDef := "", false
		if j := strings.Index(","+opts, ",default="); j >= 0 {
			lit, hasDef = opts[j+len("default="):], true
			opts = opts[:max(j-1, 0)]
		} else if strings.HasPrefix(name, "default=") {
			return fmt.Errorf("phpser: field %s of %v: default= needs the property name first: `php:\"name,default=...\"` or `php:\",default=...\"`", sf.Name, t)
		}
		idx := append(append([]int(nil), index...), i)
		if sf.Anonymous && name == "" && !strings.Contains(opts, "rest") {
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct && !isSpecialStruct(et) {
				if hasDef {
					return fmt.Errorf("phpser: embedded %v of %v: default= belongs on the fields of the embedded struct", sf.Type, t)
				}
				// Private properties of an embedded struct that names its own class are
				// declared by that class, as with PHP inheritance.
				dc := declClass
				if c := phpClassOf(et); c != "" {
					dc = c
				}
				if err := si.collect(et, idx, dc, depth+1, visiting); err != nil {
					return err
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		f := field{name: sf.Name, index: idx, typ: sf.Type, depth: depth, class: declClass}
		if hasTag && name != "" {
			f.name, f.tagged = name, true
		}
		for _, o := range strings.Split(opts, ",") {
			switch {
			case o == "":
			case o == "public":
				f.vis = Public
			case o == "protected":
				f.vis = Protected
			case o == "private":
				f.vis = Private
			case strings.HasPrefix(o, "private="):
				f.vis, f.class = Private, strings.TrimPrefix(o, "private=")
			case o == "omitempty":
				f.omitEmpty = true
			case o == "rest":
				f.rest = true
			case strings.HasPrefix(o, "class="):
				f.objClass = strings.TrimPrefix(o, "class=")
			default:
				return fmt.Errorf("phpser: field %s of %v: unknown tag option %q", sf.Name, t, o)
			}
		}
		if f.rest && !restType(f.typ) {
			return fmt.Errorf("phpser: rest field %s of %v must be []phpser.Entry or a map with string keys", sf.Name, t)
		}
		if hasDef {
			if f.rest {
				return fmt.Errorf("phpser: rest field %s of %v cannot have a default", sf.Name, t)
			}
			var err error
			if f.def, f.defBytes, err = declaredDefault(t, sf, lit); err != nil {
				return err
			}
		}
		si.fields = append(si.fields, f)
	}
	return nil
}

func restType(t reflect.Type) bool {
	return t == entrySliceType || (t.Kind() == reflect.Map && t.Key().Kind() == reflect.String)
}

// lookup finds the field a property goes into: the exact mangled match first, then
// any field with that plain name, then (for untagged fields) a case-insensitive match.
func (si *structInfo) lookup(name string, vis Visibility, class string) *field {
	if idx := si.byName[name]; len(idx) > 0 {
		if len(idx) > 1 {
			for _, i := range idx {
				f := &si.fields[i]
				if f.vis == vis && (vis != Private || f.class == class) {
					return f
				}
			}
		}
		return &si.fields[idx[0]]
	}
	if len(si.fold) > 0 {
		if i, ok := si.fold[strings.ToLower(name)]; ok {
			return &si.fields[i]
		}
	}
	return nil
}

// pathElem is one step of the property path reported in errors.
type pathElem struct {
	name  string
	index int64
	isIdx bool
}

// pathShown is how many steps of a long path an error shows at each end: a value
// nested thousands of levels deep (or a Go pointer cycle) would otherwise make the
// message thousands of steps long.
const pathShown = 16

func renderPath(root string, path []pathElem) string {
	var b strings.Builder
	b.WriteString(root)
	for i, p := range path {
		if len(path) > 2*pathShown+1 && i >= pathShown && i < len(path)-pathShown {
			if i == pathShown {
				b.WriteString(".(" + strconv.Itoa(len(path)-2*pathShown) + " more levels)")
			}
			continue
		}
		if p.isIdx {
			b.WriteByte('[')
			b.WriteString(strconv.FormatInt(p.index, 10))
			b.WriteByte(']')
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(p.name)
	}
	return b.String()
}
