package phpclass

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/laraq/laraq/phpser"
)

// How a PHP property maps to a Go field, for gen and for Check's fixes.

// goField is the Go side of one property.
type goField struct {
	typ      string // the Go type expression
	objClass string // the class= option for a date of another class than Carbon
	def      string // the default= literal, "" for none
	notes    []string
}

// Where a generated type comes from: a package that imports laraq's and phpser's.
const (
	valueGo   = "*phpser.Value" // any PHP value, kept exactly (order, int keys, objects)
	mapType   = "phpser.Map"
	modelType = "phpser.ModelIdentifier"
	timeType  = "time.Time"
)

// CarbonClass is the class phpser writes for a time.Time by default.
const carbonClass = `Illuminate\Support\Carbon`

// goType is the Go type of property p of class c; enumName names the Go type of a PHP
// enum (nil: its short name).
func goType(p *Property, c *Class, enumName func(string) string) (goField, bool) {
	if enumName == nil {
		enumName = shortName
	}
	var f goField
	var names []TypeName
	for _, n := range p.TypeNames {
		if n.Name != "null" {
			names = append(names, n)
		}
	}
	switch {
	case p.Type == "":
		// Untyped: PHP holds anything; the default's type is the best guess there is.
		f.typ = valueGo
		if d := p.DefaultValue(); d != nil {
			switch d.Kind() {
			case phpser.KindBool:
				f.typ = "bool"
			case phpser.KindInt:
				f.typ = "int"
			case phpser.KindFloat:
				f.typ = "float64"
			case phpser.KindString:
				f.typ = "string"
			case phpser.KindArray:
				f.typ = mapType
			case phpser.KindEnum:
				f.typ = enumName(d.EnumClass())
			}
		}
		if f.typ != valueGo {
			f.notes = append(f.notes, "untyped in PHP: the type of its default")
		}
	case len(names) != 1:
		f.typ = valueGo
	default:
		n := names[0]
		switch n.Kind {
		case "builtin":
			switch strings.ToLower(n.Name) {
			case "int":
				f.typ = "int"
			case "float":
				f.typ = "float64"
			case "string":
				f.typ = "string"
			case "bool", "true", "false":
				f.typ = "bool"
			case "array":
				f.typ = mapType
			default:
				f.typ = valueGo
			}
		case "enum":
			f.typ = enumName(n.Name)
		case "model", "collection":
			if c.SerializesModels() {
				f.typ = modelType
			} else {
				f.typ = valueGo
				f.notes = append(f.notes, "an Eloquent "+n.Kind+" the class serializes whole (no SerializesModels)")
			}
		case "date":
			f.typ = timeType
			switch {
			case n.Name == carbonClass:
			case isDateInterface(n.Name):
				f.notes = append(f.notes, "PHP declares "+n.Name+"; Go writes an "+carbonClass)
			default:
				f.objClass = n.Name
			}
		default:
			f.typ = valueGo
		}
	}
	if p.Nullable && f.typ != valueGo {
		f.typ = "*" + f.typ
	}
	if d := p.DefaultValue(); d != nil {
		lit, ok := literalFor(d, f.typ)
		if ok {
			f.def = lit
		} else {
			f.notes = append(f.notes, "PHP's default "+describe(d)+" has no tag form: set it where the value is made")
		}
	}
	return f, true
}

func isDateInterface(name string) bool {
	return strings.EqualFold(name, "DateTimeInterface") || strings.EqualFold(name, `Carbon\CarbonInterface`)
}

// shortName is a class's last name segment.
func shortName(class string) string {
	if i := strings.LastIndexByte(class, '\\'); i >= 0 {
		return class[i+1:]
	}
	return class
}

// literalFor is the default= literal a field of Go type typ declares for PHP value v.
func literalFor(v *phpser.Value, typ string) (string, bool) {
	base := strings.TrimPrefix(typ, "*")
	if v.Kind() == phpser.KindNull {
		return "null", strings.HasPrefix(typ, "*")
	}
	if v.Kind() == phpser.KindEnum {
		if typ == valueGo || base == mapType || !isGoIdent(base) {
			return "", false
		}
		return jsonString(v.EnumCase())
	}
	return jsonLiteral(v, 0)
}

// defaultLiteral is the default= literal for v in a field of Go type t (nil: any type).
func defaultLiteral(v *phpser.Value, t reflect.Type) (string, bool) {
	if t != nil {
		for t.Kind() == reflect.Pointer {
			if v.Kind() == phpser.KindNull {
				return "null", true
			}
			t = t.Elem()
		}
	}
	if v.Kind() == phpser.KindEnum {
		return jsonString(v.EnumCase())
	}
	return jsonLiteral(v, 0)
}

// jsonLiteral writes a PHP constant (null, scalars, arrays of them) as the JSON literal
// phpser's default= reads back to it: floats keep a fraction, arrays that are lists are
// JSON arrays, others objects with their keys in order.
func jsonLiteral(v *phpser.Value, depth int) (string, bool) {
	if depth > 64 {
		return "", false
	}
	switch v.Kind() {
	case phpser.KindNull:
		return "null", true
	case phpser.KindBool:
		return strconv.FormatBool(v.Bool()), true
	case phpser.KindInt:
		return strconv.FormatInt(v.Int(), 10), true
	case phpser.KindFloat:
		f := v.Float()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return "", false
		}
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s, true
	case phpser.KindString:
		return jsonString(v.Str())
	case phpser.KindArray:
		ents := v.Entries()
		list := true
		for i, e := range ents {
			if !e.Key.IsInt() || e.Key.Int() != int64(i) {
				list = false
			}
		}
		var b strings.Builder
		if list {
			b.WriteByte('[')
		} else {
			b.WriteByte('{')
		}
		for i := range ents {
			if i > 0 {
				b.WriteByte(',')
			}
			if !list {
				k, ok := jsonString(ents[i].Key.String())
				if !ok {
					return "", false
				}
				b.WriteString(k + ":")
			}
			s, ok := jsonLiteral(&ents[i].Value, depth+1)
			if !ok {
				return "", false
			}
			b.WriteString(s)
		}
		if list {
			b.WriteByte(']')
		} else {
			b.WriteByte('}')
		}
		return b.String(), true
	}
	return "", false // objects, enums inside arrays, references: no JSON form
}

func jsonString(s string) (string, bool) {
	if !utf8.ValidString(s) {
		return "", false
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n"), true
}

// fieldDecl is the Go field declaration of property p, its name unique among used.
func fieldDecl(p *Property, c *Class, enumName func(string) string, used map[string]bool) (string, string) {
	f, _ := goType(p, c, enumName)
	name := goFieldName(p.Name, used)
	return name + " " + f.typ + " " + structTag(p, c, f), name
}

// structTag is the field's php tag: name, visibility, class= and default=.
func structTag(p *Property, c *Class, f goField) string {
	opts := p.Name + tagOptions(p, c)
	if f.objClass != "" {
		opts += ",class=" + f.objClass
	}
	if f.def != "" {
		opts += ",default=" + f.def
	}
	tag := `php:` + strconv.Quote(opts)
	if strings.ContainsRune(tag, '`') {
		return strconv.Quote(tag)
	}
	return "`" + tag + "`"
}

// goFieldName makes an exported Go name of a PHP property name (orderId → OrderID),
// unique among used (which it extends).
func goFieldName(php string, used map[string]bool) string {
	var b strings.Builder
	upper := true
	for _, r := range php {
		switch {
		case r == '_':
			upper = true
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
		default:
			continue
		}
		if upper {
			r = unicode.ToUpper(r)
			upper = false
		}
		b.WriteRune(r)
	}
	name := initialisms(b.String())
	if name == "" || !unicode.IsUpper([]rune(name)[0]) {
		name = "P" + name
	}
	base := name
	for i := 2; used[name]; i++ {
		if i == 2 && !used[base+"Prop"] {
			name = base + "Prop"
			break
		}
		name = base + strconv.Itoa(i)
	}
	used[name] = true
	return name
}

// initialisms writes Go's initialisms in upper case: Id, Url, Uuid, Json, Html, Api at
// the end of a name or before an upper-case letter.
func initialisms(s string) string {
	for _, w := range []string{"Uuid", "Url", "Json", "Html", "Api", "Id"} {
		for i := 0; ; {
			j := strings.Index(s[i:], w)
			if j < 0 {
				break
			}
			j += i
			end := j + len(w)
			if end == len(s) || unicode.IsUpper(rune(s[end])) || unicode.IsDigit(rune(s[end])) {
				s = s[:j] + strings.ToUpper(w) + s[end:]
			}
			i = end
		}
	}
	return s
}

func isGoIdent(s string) bool {
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return s != ""
}

var (
	valueType    = reflect.TypeFor[phpser.Value]()
	goMapType    = reflect.TypeFor[phpser.Map]()
	modelIDType  = reflect.TypeFor[phpser.ModelIdentifier]()
	goTimeType   = reflect.TypeFor[time.Time]()
	unmarshalerT = reflect.TypeFor[phpser.Unmarshaler]()
	marshalerT   = reflect.TypeFor[phpser.Marshaler]()
)

// typeMismatch says why a field of Go type t cannot hold what typed property p holds,
// or "". Untyped properties, union types and fields that read their own value
// (interfaces, *phpser.Value, phpser.Unmarshaler) always fit.
func typeMismatch(p *Property, t reflect.Type) string {
	var names []TypeName
	for _, n := range p.TypeNames {
		if n.Name != "null" {
			names = append(names, n)
		}
	}
	if p.Type == "" || len(names) != 1 {
		return ""
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Interface || t == valueType || reflect.PointerTo(t).Implements(unmarshalerT) || t.Implements(marshalerT) {
		return ""
	}
	n := names[0]
	ok := true
	switch n.Kind {
	case "builtin":
		switch strings.ToLower(n.Name) {
		case "int":
			ok = t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64
		case "float":
			ok = t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64
		case "string":
			c, has := classOf(t)
			ok = t.Kind() == reflect.String && (!has || c == "")
		case "bool", "true", "false":
			ok = t.Kind() == reflect.Bool
		case "array":
			ok = t == goMapType || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map
		}
	case "enum":
		c, has := classOf(t)
		ok = t.Kind() == reflect.String && has && strings.EqualFold(c, n.Name)
	case "model", "collection":
		ok = t == modelIDType
	case "date":
		ok = t == goTimeType
	}
	if ok {
		return ""
	}
	return "PHP declares " + p.Type + ", which a Go " + t.String() + " cannot hold"
}
