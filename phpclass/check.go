package phpclass

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/laraq/laraq/phpser"
)

// Problem is one difference between a Go type and the PHP class it stands for, named
// so that the fix is plain: the class, the property (or "" for the class itself), the
// Go field involved, what is wrong and what to change.
type Problem struct {
	Class    string
	Property string
	Field    string // the Go field, when one is involved
	Kind     string // one of the Problem* kinds
	Message  string
	Fix      string
	// Warning: harmless for decoding and running, but Go's bytes differ from PHP's (the
	// order of the properties); CheckTypes does not refuse a type for it.
	Warning bool
}

// Kinds of Problem.
const (
	ProblemClass            = "class"             // PHPClass names another class
	ProblemTags             = "tags"              // the php tags do not parse
	ProblemUnmapped         = "unmapped"          // a PHP property no field takes
	ProblemUnknown          = "unknown"           // a field no PHP property has
	ProblemCase             = "case"              // a field whose name differs from the property's in case only
	ProblemVisibility       = "visibility"        // public/protected/private differ
	ProblemDefault          = "default"           // default= differs from PHP's default
	ProblemType             = "type"              // the Go type cannot hold what PHP's type holds
	ProblemUnique           = "unique"            // ShouldBeUnique / ShouldBeUniqueUntilProcessing not said alike
	ProblemEncrypted        = "encrypted"         // ShouldBeEncrypted not said alike
	ProblemSerializesModels = "serializes-models" // PHPSerializesModels says otherwise
	ProblemQueueable        = "queueable"         // laraq.Queueable embedded for a class without the trait, or missing
	ProblemOrder            = "order"             // fields in another order than serialize() writes (a Warning)
)

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Class)
	if p.Property != "" {
		b.WriteString(" $" + p.Property)
	}
	if p.Field != "" {
		b.WriteString(" (Go field " + p.Field + ")")
	}
	b.WriteString(": " + p.Message)
	if p.Fix != "" {
		b.WriteString("; fix: " + p.Fix)
	}
	return b.String()
}

// Unmapper is implemented by a Go type that leaves PHP properties unmapped on purpose:
// Check does not report them. The method is called on the zero value.
//
//	func (SendInvoice) PHPUnmapped() []string { return []string{"logger"} }
type Unmapper interface {
	PHPUnmapped() []string
}

// CheckError is CheckTypes' error: every problem of every type, warnings left out.
type CheckError struct {
	Problems []Problem
}

func (e *CheckError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "phpclass: %d problem(s) between the Go types and their PHP classes:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  " + p.String())
	}
	return b.String()
}

// CheckTypes compares each Go type with its PHP class in the manifest (types maps the
// class name to the type, as laraq.Jobs declares them) and returns a *CheckError listing
// every problem that is not a Warning, or nil. A class the manifest lacks is a problem:
// the manifest is older than the code, or names another application.
func CheckTypes(m *Manifest, types map[string]reflect.Type) error {
	var all []Problem
	for _, p := range CheckAll(m, types) {
		if !p.Warning {
			all = append(all, p)
		}
	}
	if len(all) == 0 {
		return nil
	}
	return &CheckError{Problems: all}
}

// CheckAll is CheckTypes' work: every problem of every type, warnings included, by class
// name.
func CheckAll(m *Manifest, types map[string]reflect.Type) []Problem {
	names := make([]string, 0, len(types))
	for n := range types {
		names = append(names, n)
	}
	sort.Strings(names)
	var all []Problem
	for _, n := range names {
		c := m.Class(n)
		if c == nil {
			all = append(all, Problem{Class: n, Kind: ProblemClass,
				Message: "the manifest has no such class (it names " + fmt.Sprint(len(m.Classes)) + " classes)",
				Fix:     "run 'laraq classes' again for the application that has it"})
			continue
		}
		all = append(all, Check(c, types[n])...)
	}
	return all
}

// Check compares Go type t with class c: PHPClass, every property (name with its case,
// visibility, default, type), the interfaces laraq acts on (ShouldBeUnique,
// ShouldBeUniqueUntilProcessing, ShouldBeEncrypted), SerializesModels, and the order of
// the properties (a Warning). The Bus\Queueable properties are laraq.Queueable's: a type
// embedding it maps them for every release.
func Check(c *Class, t reflect.Type) []Problem {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []Problem
	add := func(p Problem) {
		p.Class = c.Name
		out = append(out, p)
	}
	if t == nil || t.Kind() != reflect.Struct {
		add(Problem{Kind: ProblemClass, Message: fmt.Sprintf("a %v is not a struct", t), Fix: "run 'laraq gen' for a type"})
		return out
	}
	if got, ok := classOf(t); !ok {
		add(Problem{Kind: ProblemClass, Message: t.String() + " has no PHPClass method", Fix: "add func (" + t.Name() + ") PHPClass() string { return `" + c.Name + "` }"})
	} else if got != c.Name {
		add(Problem{Kind: ProblemClass, Message: fmt.Sprintf("%v's PHPClass is %q", t, got), Fix: "return `" + c.Name + "` (the class as declared)"})
	}
	fields, err := phpser.Fields(t)
	if err != nil {
		add(Problem{Kind: ProblemTags, Message: err.Error(), Fix: "correct the php tag"})
		return out
	}
	out = append(out, checkProperties(c, t, fields)...)
	out = append(out, checkInterfaces(c, t)...)
	return out
}

// laraqTraitField reports whether a field comes from laraq's stand-in for a trait
// (BusQueueable, InteractsWithQueue, Queueable), which the Dispatcher writes as the
// connection's release declares it: the trait's name.
func laraqTraitField(f *phpser.Field) string {
	for _, v := range f.Via {
		if !strings.HasPrefix(v.PkgPath(), "github.com/laraq/laraq") {
			continue
		}
		switch v.Name() {
		case "BusQueueable":
			return BusQueueable
		case "InteractsWithQueue":
			return InteractsWithQueue
		}
	}
	return ""
}

func checkProperties(c *Class, t reflect.Type, fields []phpser.Field) []Problem {
	var out []Problem
	add := func(p Problem) { p.Class = c.Name; out = append(out, p) }

	unmapped := map[string]bool{}
	if u, ok := zeroAs[Unmapper](t); ok {
		for _, n := range u.PHPUnmapped() {
			unmapped[n] = true
			if c.Property(n) == nil {
				add(Problem{Property: n, Kind: ProblemUnknown, Message: "PHPUnmapped names a property the class does not have", Fix: "remove it from PHPUnmapped"})
			}
		}
	}
	hasRest, busEmbedded := false, false
	mapped := map[string]bool{}
	var goOrder []string
	for i := range fields {
		f := &fields[i]
		if f.Rest {
			hasRest = true
			continue
		}
		switch laraqTraitField(f) {
		case BusQueueable:
			busEmbedded = true
			continue
		case InteractsWithQueue:
			if !c.Uses(InteractsWithQueue) {
				add(Problem{Property: f.Name, Field: f.GoName, Kind: ProblemQueueable,
					Message: "the Go type embeds laraq.InteractsWithQueue (or Queueable), but the class does not use Illuminate\\Queue\\InteractsWithQueue",
					Fix:     "embed laraq.BusQueueable alone, or neither"})
				continue
			}
		}
		p := c.Property(f.Name)
		if p == nil {
			pr := unknownField(c, f)
			if pr.Kind == ProblemCase {
				unmapped[pr.Property] = true // one problem: the case
			}
			add(pr)
			continue
		}
		mapped[p.Name] = true
		goOrder = append(goOrder, p.Key)
		if p.Unwritten {
			add(Problem{Property: p.Name, Field: f.GoName, Kind: ProblemUnknown,
				Message: "serialize() never writes this property (a parent's private property under SerializesModels)",
				Fix:     "remove the field"})
			continue
		}
		out = append(out, checkField(c, p, f)...)
	}

	if c.Queueable() && !busEmbedded {
		// Mapping Bus\Queueable's properties one by one works for one release only.
		var names []string
		for _, p := range c.Properties {
			if p.From == BusQueueable && !mapped[p.Name] {
				names = append(names, "$"+p.Name)
				unmapped[p.Name] = true // reported here, as one problem
			}
		}
		if len(names) > 0 && !hasRest {
			add(Problem{Kind: ProblemQueueable, Message: "the class uses Illuminate\\Bus\\Queueable, whose properties (" + strings.Join(names, ", ") + ") the Go type does not map",
				Fix: "embed laraq.Queueable (or laraq.BusQueueable), which the Dispatcher writes as each release declares them"})
		}
	}
	if !c.Queueable() && busEmbedded {
		add(Problem{Kind: ProblemQueueable, Message: "the Go type embeds laraq.Queueable (or BusQueueable), but the class does not use Illuminate\\Bus\\Queueable",
			Fix: "remove the embedded laraq.Queueable / BusQueueable; keep laraq.InteractsWithQueue if the class uses InteractsWithQueue"})
	}
	for i := range c.Properties {
		p := &c.Properties[i]
		if mapped[p.Name] || unmapped[p.Name] || p.Unwritten || (busEmbedded && p.From == BusQueueable) || hasRest {
			continue
		}
		decl, _ := fieldDecl(p, c, nil, map[string]bool{})
		add(Problem{Property: p.Name, Kind: ProblemUnmapped,
			Message: "no field takes this " + p.Visibility + " property: the handler would see a zero value, and Go's dispatch would leave it out",
			Fix:     "add the field " + decl + " (or name it in PHPUnmapped)"})
	}

	// The order serialize() writes, the trait properties laraq places itself aside.
	var phpOrder []string
	for _, p := range c.Properties {
		if mapped[p.Name] && !p.Unwritten {
			phpOrder = append(phpOrder, p.Key)
		}
	}
	if !sameOrder(goOrder, phpOrder) {
		add(Problem{Kind: ProblemOrder, Warning: true,
			Message: "the fields are in another order than serialize() writes the properties (" + plainNames(phpOrder) + "), so Go's bytes differ from PHP's",
			Fix:     "order the fields as PHP does ('laraq gen' does)"})
	}
	return out
}

// unknownField is the problem of a field no property has: a misspelling, another case,
// or a property the class lost.
func unknownField(c *Class, f *phpser.Field) Problem {
	for i := range c.Properties {
		p := &c.Properties[i]
		if strings.EqualFold(p.Name, f.Name) {
			return Problem{Property: p.Name, Field: f.GoName, Kind: ProblemCase,
				Message: "the field's property $" + f.Name + " differs from PHP's $" + p.Name + " in case only: PHP property names are case-sensitive",
				Fix:     "tag it `php:\"" + p.Name + tagOptions(p, c) + "\"`"}
		}
	}
	var names []string
	for _, p := range c.Properties {
		if !p.Unwritten {
			names = append(names, "$"+p.Name)
		}
	}
	return Problem{Property: f.Name, Field: f.GoName, Kind: ProblemUnknown,
		Message: "the class has no property $" + f.Name + " (it has " + strings.Join(names, ", ") + ")",
		Fix:     "correct the name in the php tag, or remove the field"}
}

// tagOptions are the tag options after the name that visibility and default need.
func tagOptions(p *Property, c *Class) string {
	var b strings.Builder
	switch p.Vis() {
	case phpser.Protected:
		b.WriteString(",protected")
	case phpser.Private:
		if _, _, cls := phpser.UnmangleName(p.Key); cls != c.Name {
			b.WriteString(",private=" + cls)
		} else {
			b.WriteString(",private")
		}
	}
	return b.String()
}

func checkField(c *Class, p *Property, f *phpser.Field) []Problem {
	var out []Problem
	add := func(kind, msg, fix string) {
		out = append(out, Problem{Class: c.Name, Property: p.Name, Field: f.GoName, Kind: kind, Message: msg, Fix: fix})
	}
	if f.Visibility != p.Vis() {
		add(ProblemVisibility, "the field is "+f.Visibility.String()+", PHP's property is "+p.Visibility,
			"tag it `php:\""+p.Name+tagOptions(p, c)+"\"`")
	} else if p.Vis() == phpser.Private {
		_, _, want := phpser.UnmangleName(p.Key)
		if got := cmpOr(f.Class, c.Name); got != want {
			add(ProblemVisibility, "the private property is written as declared by "+got+", PHP writes it as declared by "+want,
				"tag it `php:\""+p.Name+tagOptions(p, c)+"\"`")
		}
	}
	phpDef := p.DefaultValue()
	switch {
	case phpDef == nil && f.Default != nil:
		why := "a typed property without initializer"
		if p.Promoted {
			why = "a promoted constructor property"
		}
		add(ProblemDefault, "the field declares default="+literalOr(f.Default)+", but PHP's property has no default ("+why+")",
			"remove default= from the tag")
	case phpDef != nil && f.Default == nil:
		lit, ok := defaultLiteral(phpDef, f.Type)
		fix := "add default=" + lit + " to the tag"
		if !ok {
			fix = "give the field a type that holds PHP's default " + describe(phpDef)
		}
		add(ProblemDefault, "PHP declares the default "+describe(phpDef)+", which the field does not: Laravel 9.4+ leaves the property out when it holds it, and Go would see a zero value", fix)
	case phpDef != nil && !phpser.Identical(phpDef, f.Default):
		lit, ok := defaultLiteral(phpDef, f.Type)
		fix := "write default=" + lit
		if !ok {
			fix = "give the field a type that holds PHP's default " + describe(phpDef)
		}
		add(ProblemDefault, "the field declares default="+literalOr(f.Default)+", PHP's default is "+describe(phpDef), fix)
	}
	if msg := typeMismatch(p, f.Type); msg != "" {
		want, _ := goType(p, c, nil)
		add(ProblemType, msg, "make the field a "+want.typ)
	}
	return out
}

func checkInterfaces(c *Class, t reflect.Type) []Problem {
	var out []Problem
	add := func(kind, msg, fix string) {
		out = append(out, Problem{Class: c.Name, Kind: kind, Message: msg, Fix: fix})
	}
	name := t.Name()
	unique := hasMethod(t, "UniqueID", reflect.TypeFor[func() string]()) && hasMethod(t, "UniqueFor", reflect.TypeFor[func() time.Duration]())
	switch {
	case c.Unique() && !unique:
		add(ProblemUnique, "the class implements ShouldBeUnique, the Go type does not say so: Go's dispatch would take no lock and a Go worker release none",
			"add the methods UniqueID() string and UniqueFor() time.Duration (laraq.UniqueJob)")
	case !c.Unique() && unique:
		add(ProblemUnique, "the Go type is a laraq.UniqueJob, the class does not implement ShouldBeUnique", "remove UniqueID and UniqueFor, or make the class unique")
	}
	until := hasMethod(t, "ShouldBeUniqueUntilProcessing", reflect.TypeFor[func()]())
	switch {
	case c.UniqueUntilProcessing() && !until:
		add(ProblemUnique, "the class implements ShouldBeUniqueUntilProcessing, the Go type does not say so: the lock would be kept until the job ends",
			"add func ("+name+") ShouldBeUniqueUntilProcessing() {}")
	case !c.UniqueUntilProcessing() && until:
		add(ProblemUnique, "the Go type says ShouldBeUniqueUntilProcessing, the class does not implement it", "remove the ShouldBeUniqueUntilProcessing method")
	}
	enc := hasMethod(t, "ShouldBeEncrypted", reflect.TypeFor[func()]())
	switch {
	case c.Encrypted() && !enc:
		add(ProblemEncrypted, "the class implements ShouldBeEncrypted, the Go type does not say so: Go's dispatch would write the command in the clear",
			"add func ("+name+") ShouldBeEncrypted() {}")
	case !c.Encrypted() && enc:
		add(ProblemEncrypted, "the Go type says ShouldBeEncrypted, the class does not implement it", "remove the ShouldBeEncrypted method")
	}
	uses, said := phpser.SerializesModels(t)
	if !said {
		uses = true // the Dispatcher takes a type that does not say to use it
	}
	if uses != c.SerializesModels() {
		msg := "the class does not use SerializesModels, but the Go type says it does"
		if !said {
			msg = "the class does not use SerializesModels, but a Go type without PHPSerializesModels is taken to"
		}
		fix := "add func (" + name + ") PHPSerializesModels() bool { return false }"
		if c.SerializesModels() {
			msg, fix = "the class uses SerializesModels, but the Go type says it does not", "return true from PHPSerializesModels"
		}
		add(ProblemSerializesModels, msg+" (it decides which defaults Laravel 9.4+ leaves out)", fix)
	}
	return out
}

// classOf calls a type's PHPClass on its zero value.
func classOf(t reflect.Type) (string, bool) {
	type classer interface{ PHPClass() string }
	c, ok := zeroAs[classer](t)
	if !ok {
		return "", false
	}
	return c.PHPClass(), true
}

// zeroAs returns the zero value of t (or a pointer to one) as an I, if either implements it.
func zeroAs[I any](t reflect.Type) (I, bool) {
	it := reflect.TypeFor[I]()
	var zero I
	switch {
	case t.Implements(it):
		return reflect.Zero(t).Interface().(I), true
	case reflect.PointerTo(t).Implements(it):
		return reflect.New(t).Interface().(I), true
	}
	return zero, false
}

func hasMethod(t reflect.Type, name string, sig reflect.Type) bool {
	for _, tt := range []reflect.Type{t, reflect.PointerTo(t)} {
		if m, ok := tt.MethodByName(name); ok {
			ft := m.Type
			// Drop the receiver.
			in := make([]reflect.Type, ft.NumIn()-1)
			for i := range in {
				in[i] = ft.In(i + 1)
			}
			out := make([]reflect.Type, ft.NumOut())
			for i := range out {
				out[i] = ft.Out(i)
			}
			return reflect.FuncOf(in, out, ft.IsVariadic()) == sig
		}
	}
	return false
}

func sameOrder(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func plainNames(keys []string) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		n, _, _ := phpser.UnmangleName(k)
		names[i] = "$" + n
	}
	return strings.Join(names, ", ")
}

func literalOr(v *phpser.Value) string {
	if lit, ok := defaultLiteral(v, nil); ok {
		return lit
	}
	return describe(v)
}

// describe shows a PHP value as serialize() writes it.
func describe(v *phpser.Value) string {
	b, err := phpser.Encode(v)
	if err != nil {
		return v.String()
	}
	return string(b)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
