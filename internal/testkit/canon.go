package testkit

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/phpser"
)

// Canon is testdata/phpser/fixtures/canon.php's lossless description of a PHP value, as
// the PHP test jobs report what they received; "model" is jobs.php's short form of a
// restored Eloquent model.
type Canon struct {
	T          string          `json:"t"`
	V          json.RawMessage `json:"v"`
	Items      []canonItem     `json:"items"`
	Class      string          `json:"class"`
	Props      []canonItem     `json:"props"`
	Key        *Canon          `json:"key"`
	Attributes *Canon          `json:"attributes"`
}

type canonItem struct {
	K Canon `json:"k"`
	V Canon `json:"v"`
}

// Prop is one property of a record: mangled name and canon value.
type Prop struct {
	K string `json:"k"`
	V Canon  `json:"v"`
}

// Text is a string, number or key as PHP printed it (a string arrives base64-encoded).
func (c Canon) Text() string {
	var s string
	_ = json.Unmarshal(c.V, &s)
	if c.T == "string" {
		b, _ := base64.StdEncoding.DecodeString(s)
		return string(b)
	}
	return s
}

// keyString is an array key or property name as text.
func (c Canon) keyString() string { return c.Text() }

// ToAny builds what phpser decodes the value to in an `any`.
func (c Canon) ToAny() any {
	switch c.T {
	case "null":
		return nil
	case "bool":
		var b bool
		_ = json.Unmarshal(c.V, &b)
		return b
	case "int":
		n, _ := strconv.ParseInt(c.Text(), 10, 64)
		return n
	case "float":
		return c.float()
	case "string":
		return c.Text()
	case "enum":
		cls, cs, _ := strings.Cut(c.Text(), ":")
		return phpser.EnumCase{Class: cls, Case: cs}
	case "array":
		list := true
		for i, it := range c.Items {
			if it.K.T != "int" || it.K.Text() != strconv.Itoa(i) {
				list = false
			}
		}
		if list {
			out := make([]any, len(c.Items))
			for i, it := range c.Items {
				out[i] = it.V.ToAny()
			}
			return out
		}
		m := map[string]any{}
		for _, it := range c.Items {
			m[it.K.keyString()] = it.V.ToAny()
		}
		return m
	case "object":
		o := phpser.Object{Class: c.Class, Props: map[string]any{}}
		for _, it := range c.Props {
			name, _, _ := phpser.UnmangleName(it.K.keyString())
			o.Props[name] = it.V.ToAny()
		}
		return o
	}
	return fmt.Sprintf("<canon %s>", c.T)
}

func (c Canon) float() float64 {
	s := c.Text()
	if s == "nan" {
		return math.NaN()
	}
	bits, _ := strconv.ParseUint(s, 16, 64)
	return math.Float64frombits(bits)
}

// CompareCanon reports every difference between a PHP value as PHP saw it and the Go
// value phpser decoded it into.
func CompareCanon(path string, c Canon, v reflect.Value) []string {
	var diffs []string
	bad := func(format string, args ...any) []string {
		return append(diffs, path+": "+fmt.Sprintf(format, args...))
	}
	if v.Kind() == reflect.Pointer {
		if c.T == "null" {
			if !v.IsNil() {
				return bad("want null, got %v", v.Elem())
			}
			return nil
		}
		if v.IsNil() {
			return bad("nil, want %s", c.T)
		}
		v = v.Elem()
	}
	switch x := v.Interface().(type) {
	case time.Time:
		fields := map[string]Canon{}
		for _, it := range c.Props {
			fields[it.K.keyString()] = it.V
		}
		if got := x.Format("2006-01-02 15:04:05.000000"); got != fields["date"].Text() {
			return bad("date %s, want %s", got, fields["date"].Text())
		}
		if x.Location().String() != fields["timezone"].Text() {
			return bad("zone %s, want %s", x.Location(), fields["timezone"].Text())
		}
		return nil
	case phpser.ModelIdentifier:
		if c.T == "model" {
			if x.Class != c.Class || fmt.Sprint(x.ID) != fmt.Sprint(c.Key.ToAny()) {
				return bad("model %s#%v, want %s#%v", x.Class, x.ID, c.Class, c.Key.ToAny())
			}
			return nil
		}
		if c.T == "models" { // an Eloquent collection: its class, its models' class and keys
			ids, _ := x.ID.([]any)
			if len(ids) != len(c.Items) || x.CollectionClass != nil && *x.CollectionClass != c.Class {
				return bad("collection %v of %s (%v), want %d models of a %s", x.ID, x.Class, x.CollectionClass, len(c.Items), c.Class)
			}
			for i, it := range c.Items {
				if it.V.Class != x.Class || fmt.Sprint(ids[i]) != fmt.Sprint(it.V.Key.ToAny()) {
					diffs = bad("model %d: %s#%v, want %s#%v", i, x.Class, ids[i], it.V.Class, it.V.Key.ToAny())
				}
			}
			return diffs
		}
	case phpser.Map:
		if c.T != "array" && c.T != "object" {
			return bad("Map for %s", c.T)
		}
		items := c.Items
		if c.T == "object" {
			items = c.Props
		}
		if len(items) != len(x) {
			return bad("%d items, want %d", len(x), len(items))
		}
		for i, it := range items {
			if x[i].Key.String() != it.K.keyString() || x[i].Key.IsInt() != (it.K.T == "int") {
				diffs = bad("item %d key %v, want %s", i, x[i].Key, it.K.keyString())
			}
			if !reflect.DeepEqual(x[i].Value, it.V.ToAny()) {
				diffs = bad("item %d value %#v, want %#v", i, x[i].Value, it.V.ToAny())
			}
		}
		return diffs
	}
	switch v.Kind() {
	case reflect.Interface:
		got := v.Interface()
		if !reflect.DeepEqual(got, c.ToAny()) {
			return bad("%#v, want %#v", got, c.ToAny())
		}
	case reflect.String:
		switch {
		case c.T == "enum":
			_, cs, _ := strings.Cut(c.Text(), ":")
			if v.String() != cs {
				return bad("case %q, want %q", v.String(), cs)
			}
		case c.T == "string":
			if v.String() != c.Text() {
				return bad("%q, want %q", v.String(), c.Text())
			}
		default:
			return bad("string for %s", c.T)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if c.T != "int" || strconv.FormatInt(v.Int(), 10) != c.Text() {
			return bad("%d, want %s %s", v.Int(), c.T, c.Text())
		}
	case reflect.Float32, reflect.Float64:
		want := 0.0
		switch c.T {
		case "float":
			want = c.float()
		case "int":
			n, _ := strconv.ParseInt(c.Text(), 10, 64)
			want = float64(n)
		default:
			return bad("float for %s", c.T)
		}
		if math.Float64bits(v.Float()) != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(v.Float())) {
			return bad("%v (%016x), want %v (%016x)", v.Float(), math.Float64bits(v.Float()), want, math.Float64bits(want))
		}
	case reflect.Bool:
		if c.T != "bool" || fmt.Sprint(v.Bool()) != string(c.V) {
			return bad("%v, want %s %s", v.Bool(), c.T, c.V)
		}
	case reflect.Slice:
		if c.T != "array" {
			return bad("slice for %s", c.T)
		}
		if v.Len() != len(c.Items) {
			return bad("%d elements, want %d", v.Len(), len(c.Items))
		}
		for i, it := range c.Items {
			diffs = append(diffs, CompareCanon(fmt.Sprintf("%s[%d]", path, i), it.V, v.Index(i))...)
		}
	case reflect.Map:
		if c.T != "array" {
			return bad("map for %s", c.T)
		}
		if v.Len() != len(c.Items) {
			return bad("%d entries, want %d", v.Len(), len(c.Items))
		}
		for _, it := range c.Items {
			e := v.MapIndex(reflect.ValueOf(it.K.keyString()))
			if !e.IsValid() {
				diffs = bad("missing key %q", it.K.keyString())
				continue
			}
			diffs = append(diffs, CompareCanon(path+"."+it.K.keyString(), it.V, e)...)
		}
	case reflect.Struct:
		if c.T == "model" && c.Attributes != nil {
			// jobs.php reports a restored Eloquent model by class, key and attributes.
			return CompareFields(path, map[string]Canon{"attributes": *c.Attributes}, onlyTag(v, "attributes"), nil)
		}
		var items []canonItem
		switch c.T {
		case "object":
			items = c.Props
		case "array":
			items = c.Items
		default:
			return bad("struct for %s", c.T)
		}
		props := map[string]Canon{}
		for _, it := range items {
			name, _, _ := phpser.UnmangleName(it.K.keyString())
			props[name] = it.V
		}
		diffs = append(diffs, CompareFields(path, props, v, nil)...)
	default:
		return bad("unhandled Go kind %s", v.Kind())
	}
	return diffs
}

// CompareFields compares a struct's php-tagged fields (embedded structs included) with
// the properties by plain name. used collects the names compared.
func CompareFields(path string, props map[string]Canon, v reflect.Value, used map[string]bool) []string {
	var diffs []string
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("php"), ",")
		if f.Anonymous && tag == "" {
			diffs = append(diffs, CompareFields(path, props, v.Field(i), used)...)
			continue
		}
		if !f.IsExported() || tag == "-" {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		c, ok := props[tag]
		if !ok {
			if strings.Contains(f.Tag.Get("php"), ",omitempty") && v.Field(i).IsZero() {
				continue // a property of later releases (BusQueueable), absent and zero
			}
			if t == reflect.TypeFor[laraq.BusQueueable]() && (v.Field(i).IsZero() || v.Field(i).Kind() == reflect.Slice && v.Field(i).Len() == 0) {
				continue // a Bus\Queueable property of other releases (5.8 has no middleware), at its default
			}
			if tag != "job" { // the runtime job property; PHP's records leave it out
				diffs = append(diffs, fmt.Sprintf("%s.%s: missing in PHP's value", path, tag))
			}
			continue
		}
		if used != nil {
			used[tag] = true
		}
		diffs = append(diffs, CompareCanon(path+"."+tag, c, v.Field(i))...)
	}
	return diffs
}

// CompareRecord compares every property PHP reported for a command with the Go struct
// the command was decoded into: each Go field must match, and each PHP property must
// have a Go field.
func CompareRecord(class string, props []Prop, v any) []string {
	byName := map[string]Canon{}
	var order []string
	for _, p := range props {
		name, _, _ := phpser.UnmangleName(p.K)
		byName[name] = p.V
		order = append(order, name)
	}
	used := map[string]bool{}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	diffs := CompareFields(class, byName, rv, used)
	for _, name := range order {
		if !used[name] {
			diffs = append(diffs, fmt.Sprintf("%s.%s: PHP property without Go field", class, name))
		}
	}
	return diffs
}

// onlyTag returns a struct value holding only v's field tagged name (for comparing part
// of a struct).
func onlyTag(v reflect.Value, name string) reflect.Value {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("php"), ","); tag == name {
			st := reflect.StructOf([]reflect.StructField{{Name: "F", Type: t.Field(i).Type, Tag: reflect.StructTag(`php:"` + name + `"`)}})
			out := reflect.New(st).Elem()
			out.Field(0).Set(v.Field(i))
			return out
		}
	}
	return reflect.ValueOf(struct{}{})
}
