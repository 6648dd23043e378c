package phpclass

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"sort"
	"strconv"
	"strings"

	"github.com/laraq/laraq/phpser"
)

// GenOptions say what Generate writes.
type GenOptions struct {
	// Package is the Go package name (default "jobs").
	Package string
	// Classes are the classes to write (default: every class of the manifest).
	Classes []string
}

// Generated is Generate's result: gofmt'ed Go source, and the Go type name of each class.
type Generated struct {
	Source []byte
	Types  map[string]string // PHP class → Go type name
	// Todo names the PHP methods the source leaves for a person to port
	// (App\Jobs\X::uniqueId()): their Go methods panic until written.
	Todo []string
}

// Go methods laraq calls for the PHP methods a class may define, and what the PHP ones
// without a Go counterpart are left as.
var goMethods = map[string]string{
	"tries":       "Tries() int",
	"backoff":     "Backoff() []int",
	"retryUntil":  "RetryUntil() time.Time",
	"uniqueId":    "UniqueID() string",
	"uniqueFor":   "UniqueFor() time.Duration",
	"displayName": "DisplayName() string",
	"debounceId":  "DebounceID() string",
	"tags":        "Tags() []string",
}

// methodNames are the Go methods a generated type may have, which no field may be named.
var methodNames = []string{"PHPClass", "PHPSerializesModels", "PHPAttributes", "ShouldBeEncrypted",
	"ShouldBeUniqueUntilProcessing", "Tries", "Backoff", "RetryUntil", "UniqueID", "UniqueFor",
	"DisplayName", "DebounceID", "Tags", "Queueable", "BusQueueable", "InteractsWithQueue"}

// gen is one Generate run.
type gen struct {
	m        *Manifest
	b        bytes.Buffer
	types    map[string]string // class → Go name
	enums    map[string]string // enum class → Go name
	enumUsed []string
	taken    map[string]bool // Go names at package level
	imports  map[string]bool
	helpers  map[string]bool
	todo     []string
}

// Generate writes Go types for the classes of the manifest: per class a struct with the
// fields of its properties in serialize() order (php tags with visibility and default=,
// Go types for ints, strings, arrays as phpser.Map, models as phpser.ModelIdentifier,
// dates as time.Time, enums as string types of their own), laraq.Queueable for the
// Queueable traits, its PHPClass and PHPSerializesModels, ShouldBeEncrypted and
// laraq.UniqueJob's methods where the class says so, PHPAttributes for 13.x queue
// attributes, and for each PHP method Go must compute (tries(), backoff(), uniqueId(),
// ...) the PHP source in a comment above a Go method that panics until it is written.
func Generate(m *Manifest, o GenOptions) (*Generated, error) {
	pkg := o.Package
	if pkg == "" {
		pkg = "jobs"
	}
	if !isGoIdent(pkg) {
		return nil, fmt.Errorf("phpclass: %q is not a Go package name", pkg)
	}
	var classes []*Class
	if len(o.Classes) == 0 {
		for i := range m.Classes {
			classes = append(classes, &m.Classes[i])
		}
	} else {
		for _, n := range o.Classes {
			c := m.Class(n)
			if c == nil {
				return nil, fmt.Errorf("phpclass: the manifest has no class %s", n)
			}
			classes = append(classes, c)
		}
	}
	if len(classes) == 0 {
		return nil, errors.New("phpclass: no classes to write")
	}
	g := &gen{m: m, types: map[string]string{}, enums: map[string]string{}, taken: map[string]bool{},
		imports: map[string]bool{}, helpers: map[string]bool{}}
	g.nameTypes(classes)
	var body bytes.Buffer
	for _, c := range classes {
		g.b.Reset()
		g.class(c)
		body.Write(g.b.Bytes())
	}
	g.b.Reset()
	for _, e := range g.enumUsed {
		g.enum(e)
	}
	body.Write(g.b.Bytes())
	g.b.Reset()
	g.writeHelpers()
	body.Write(g.b.Bytes())

	var src bytes.Buffer
	fmt.Fprintf(&src, "// Package %s holds Go types of PHP job classes, written by laraq gen from the facts\n", pkg)
	fmt.Fprintf(&src, "// PHP's reflection gave (Laravel %s, PHP %s). The methods marked TODO panic until\n", cmpOr(m.Laravel, "unknown"), cmpOr(m.PHP, "unknown"))
	src.WriteString("// they are written; the rest follows the PHP classes: run laraq gen again when they change.\n")
	fmt.Fprintf(&src, "package %s\n\n", pkg)
	var imps []string
	for p := range g.imports {
		imps = append(imps, p)
	}
	sort.Slice(imps, func(i, j int) bool {
		si, sj := strings.Contains(imps[i], "."), strings.Contains(imps[j], ".")
		if si != sj {
			return !si
		}
		return imps[i] < imps[j]
	})
	if len(imps) > 0 {
		src.WriteString("import (\n")
		for i, p := range imps {
			// The standard library first, as goimports groups them.
			if i > 0 && strings.Contains(p, ".") && !strings.Contains(imps[i-1], ".") {
				src.WriteString("\n")
			}
			src.WriteString("\t" + strconv.Quote(p) + "\n")
		}
		src.WriteString(")\n\n")
	}
	src.Write(body.Bytes())
	out, err := format.Source(src.Bytes())
	if err != nil {
		return nil, fmt.Errorf("phpclass: the generated source does not parse (a bug): %v\n%s", err, src.Bytes())
	}
	return &Generated{Source: out, Types: g.types, Todo: g.todo}, nil
}

// nameTypes gives each class, and each enum the properties name, a Go name: the short
// class name, with namespace segments before it where two share one.
func (g *gen) nameTypes(classes []*Class) {
	var enums []string
	for _, c := range classes {
		for _, p := range c.Properties {
			if p.Unwritten {
				continue
			}
			for _, n := range p.TypeNames {
				if n.Kind == "enum" {
					enums = append(enums, n.Name)
				}
			}
			if d := p.DefaultValue(); d != nil && d.Kind() == phpser.KindEnum {
				enums = append(enums, d.EnumClass())
			}
		}
	}
	for _, c := range classes {
		g.types[c.Name] = g.goName(c.Name)
	}
	for _, e := range enums {
		if _, done := g.enums[e]; !done {
			g.enums[e] = g.goName(e)
			g.enumUsed = append(g.enumUsed, e)
		}
	}
}

// goName is a package-level Go name for a PHP class not taken yet.
func (g *gen) goName(class string) string {
	segs := strings.Split(class, `\`)
	name := ""
	for i := len(segs) - 1; i >= 0; i-- {
		name = exportName(segs[i]) + name
		if !g.taken[name] {
			break
		}
	}
	for j := 2; g.taken[name]; j++ {
		name = exportName(segs[len(segs)-1]) + strconv.Itoa(j)
	}
	g.taken[name] = true
	return name
}

// fieldNames are the Go names of the fields of c's properties, by key.
func fieldNames(c *Class) map[string]string {
	used := map[string]bool{}
	for _, m := range methodNames {
		used[m] = true
	}
	out := map[string]string{}
	for i := range c.Properties {
		p := &c.Properties[i]
		if p.Unwritten || p.From == BusQueueable || (p.From == InteractsWithQueue && p.Name == "job") {
			continue
		}
		out[p.Key] = goFieldName(p.Name, used)
	}
	return out
}

func exportName(s string) string {
	used := map[string]bool{}
	return goFieldName(s, used)
}

func (g *gen) enumName(class string) string {
	if n, ok := g.enums[class]; ok {
		return n
	}
	for k, n := range g.enums {
		if strings.EqualFold(k, class) {
			return n
		}
	}
	return exportName(shortName(class))
}

func (g *gen) printf(format string, args ...any) { fmt.Fprintf(&g.b, format, args...) }

// comment writes text as // lines.
func (g *gen) comment(indent, text string) {
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		l = strings.TrimRight(l, " \t")
		switch {
		case l == "":
			g.printf("%s//\n", indent)
		case l[0] == '\t':
			g.printf("%s//%s\n", indent, l) // a code block, as go doc shows it
		default:
			g.printf("%s// %s\n", indent, l)
		}
	}
}

func (g *gen) class(c *Class) {
	name := g.types[c.Name]
	where := ""
	if c.File != "" {
		where = fmt.Sprintf(" (%s:%d)", c.File, c.Line)
	}
	g.comment("", fmt.Sprintf("%s is %s%s.", name, c.Name, where))
	var says []string
	for _, i := range []string{ShouldBeUnique, ShouldBeUniqueUntilProcessing, ShouldBeEncrypted, ShouldQueueAfterCommit} {
		if c.Implements(i) {
			says = append(says, shortName(i))
		}
	}
	if len(says) > 0 {
		g.comment("", "It implements "+strings.Join(says, ", ")+".")
	}
	if !c.OrderVerified {
		g.comment("", "The field order is PHP's rule for the class, not read back from serialize(): "+c.OrderNote+".")
	}
	g.printf("type %s struct {\n", name)
	g.fields(c, fieldNames(c))
	g.printf("}\n\n")

	recv := strings.ToLower(name[:1])
	g.printf("// PHPClass names the PHP class.\nfunc (%s) PHPClass() string { return %s }\n\n", name, rawString(c.Name))
	if c.SerializesModels() {
		g.printf("// PHPSerializesModels: the class uses SerializesModels.\nfunc (%s) PHPSerializesModels() bool { return true }\n\n", name)
	} else {
		g.printf("// PHPSerializesModels: the class does not use SerializesModels (%s serialization).\nfunc (%s) PHPSerializesModels() bool { return false }\n\n", c.Serialization, name)
	}
	if c.Encrypted() {
		g.printf("// ShouldBeEncrypted: the class implements ShouldBeEncrypted.\nfunc (%s) ShouldBeEncrypted() {}\n\n", name)
	}
	if c.UniqueUntilProcessing() {
		g.printf("// ShouldBeUniqueUntilProcessing: the lock goes before the job runs.\nfunc (%s) ShouldBeUniqueUntilProcessing() {}\n\n", name)
	}
	if c.Unique() {
		g.unique(c, name, recv)
	}
	g.attributes(c, name)
	for _, m := range c.Methods {
		if strings.HasPrefix(m.DeclaredBy, `Illuminate\`) || (c.Unique() && (m.Name == "uniqueId" || m.Name == "uniqueFor")) {
			continue
		}
		g.method(c, name, recv, &m)
	}
}

// fields writes the struct's fields in serialize() order, laraq's stand-ins for the
// Queueable traits where their properties begin.
func (g *gen) fields(c *Class, names map[string]string) {
	props := c.Properties
	for i := 0; i < len(props); i++ {
		p := &props[i]
		if p.Unwritten {
			g.comment("\t", fmt.Sprintf("$%s (%s, declared by %s) is never serialized: no field.", p.Name, p.Visibility, p.DeclaredBy))
			continue
		}
		switch {
		case p.From == BusQueueable:
			g.imports["github.com/laraq/laraq"] = true
			g.printf("\tlaraq.BusQueueable // %s: the Dispatcher writes each release's properties\n", BusQueueable)
			for i+1 < len(props) && props[i+1].From == BusQueueable {
				i++
			}
			continue
		case p.From == InteractsWithQueue && p.Name == "job":
			g.imports["github.com/laraq/laraq"] = true
			if i+1 < len(props) && props[i+1].From == BusQueueable {
				g.printf("\tlaraq.Queueable // %s and %s\n", InteractsWithQueue, BusQueueable)
				for i+1 < len(props) && props[i+1].From == BusQueueable {
					i++
				}
				continue
			}
			g.printf("\tlaraq.InteractsWithQueue // %s\n", InteractsWithQueue)
			continue
		}
		f, _ := goType(p, c, g.enumName)
		g.use(f.typ)
		var notes []string
		if p.From != c.Name && p.From != p.DeclaredBy {
			notes = append(notes, "from "+p.From)
		} else if p.DeclaredBy != c.Name {
			notes = append(notes, "declared by "+p.DeclaredBy)
		}
		if p.Type != "" {
			notes = append(notes, "PHP type "+p.Type)
		}
		if p.Readonly {
			notes = append(notes, "readonly")
		}
		if p.Promoted {
			notes = append(notes, "promoted")
		}
		if p.Type != "" && !p.HasDefault {
			notes = append(notes, "no default: left out of serialize() until set")
		}
		notes = append(notes, f.notes...)
		g.printf("\t%s %s %s", names[p.Key], f.typ, structTag(p, c, f))
		if len(notes) > 0 {
			g.printf(" // %s", strings.Join(notes, "; "))
		}
		g.printf("\n")
	}
}

// use records the imports a Go type expression needs.
func (g *gen) use(typ string) {
	switch {
	case strings.Contains(typ, "phpser."):
		g.imports["github.com/laraq/laraq/phpser"] = true
	case strings.Contains(typ, "time."):
		g.imports["time"] = true
	}
}

// unique writes laraq.UniqueJob's methods: from the uniqueId/uniqueFor properties, or
// stubs for the methods.
func (g *gen) unique(c *Class, name, recv string) {
	g.imports["time"] = true
	type field struct{ name, typ string }
	fieldOf := map[string]field{}
	names := fieldNames(c)
	for i := range c.Properties {
		p := &c.Properties[i]
		if f, ok := names[p.Key]; ok && (p.Name == "uniqueId" || p.Name == "uniqueFor") {
			gf, _ := goType(p, c, g.enumName)
			fieldOf[p.Name] = field{f, gf.typ}
		}
	}
	if m := c.Method("uniqueId"); m != nil && !strings.HasPrefix(m.DeclaredBy, `Illuminate\`) {
		g.method(c, name, recv, m)
	} else if f, ok := fieldOf["uniqueId"]; ok {
		g.printf("// UniqueID is the uniqueId property, as UniqueLock::getKey() reads it.\nfunc (%s %s) UniqueID() string { return %s }\n\n", recv, name, g.asString(recv+"."+f.name, f.typ))
	} else {
		g.printf("// UniqueID: the class has neither uniqueId() nor $uniqueId, so its lock has no id.\nfunc (%s) UniqueID() string { return \"\" }\n\n", name)
	}
	if m := c.Method("uniqueFor"); m != nil && !strings.HasPrefix(m.DeclaredBy, `Illuminate\`) {
		g.method(c, name, recv, m)
	} else if f, ok := fieldOf["uniqueFor"]; ok {
		g.printf("// UniqueFor is the uniqueFor property: the lock's lifetime in seconds.\nfunc (%s %s) UniqueFor() time.Duration { return %s }\n\n", recv, name, g.asSeconds(recv+"."+f.name, f.typ))
	} else if a := c.Attribute(`Illuminate\Queue\Attributes\UniqueFor`); a != nil && len(a.Arguments) == 1 {
		n := argInt(a.Arguments[0])
		g.printf("// UniqueFor is the #[UniqueFor(%d)] attribute.\nfunc (%s) UniqueFor() time.Duration { return %d * time.Second }\n\n", n, name, n)
	} else {
		g.printf("// UniqueFor: no uniqueFor: the lock lives until the job releases it.\nfunc (%s) UniqueFor() time.Duration { return 0 }\n\n", name)
	}
}

// asString is the Go expression of PHP's (string) of a field, as a lock key concatenates it.
func (g *gen) asString(expr, typ string) string {
	switch typ {
	case "string":
		return expr
	case "int":
		g.imports["strconv"] = true
		return "strconv.Itoa(" + expr + ")"
	}
	if typ != valueGo {
		g.imports["fmt"] = true
		return "fmt.Sprint(" + expr + ")"
	}
	g.helpers["string"] = true
	return "laraqPHPString(" + expr + ")"
}

// asSeconds is the Go expression of a field holding seconds.
func (g *gen) asSeconds(expr, typ string) string {
	switch typ {
	case "int":
		return "time.Duration(" + expr + ") * time.Second"
	case valueGo:
		g.helpers["seconds"] = true
		return "laraqPHPSeconds(" + expr + ")"
	}
	return "0 // " + typ + " is no number of seconds"
}

// method writes a PHP method's source in a comment above the Go method laraq calls for
// it, or, for one without a Go counterpart, the comment alone.
func (g *gen) method(c *Class, name, recv string, m *Method) {
	where := m.DeclaredBy + "::" + m.Name + "()"
	sig, ok := goMethods[m.Name]
	if !ok {
		g.comment("", fmt.Sprintf("%s has no Go method laraq calls; port it where the handler runs if it matters:", where))
		g.printf("//\n")
		g.comment("", indentSource(m.Source))
		g.printf("\n")
		return
	}
	if strings.Contains(sig, "time.") {
		g.imports["time"] = true
	}
	g.todo = append(g.todo, c.Name+"::"+m.Name+"()")
	g.comment("", fmt.Sprintf("%s is PHP's %s. TODO: write it from the PHP source:", strings.SplitN(sig, "(", 2)[0], where))
	g.comment("", indentSource(m.Source))
	g.printf("func (%s %s) %s {\n\tpanic(%s)\n}\n\n", recv, name, sig, strconv.Quote("laraq gen: port "+where+" to Go"))
}

func indentSource(src string) string {
	if src == "" {
		return "\t(source not available)"
	}
	lines := strings.Split(src, "\n")
	for i, l := range lines {
		lines[i] = "\t" + l
	}
	return strings.Join(lines, "\n")
}

// Queue attributes of Laravel 13 laraq.Attributes carries.
const attrNS = `Illuminate\Queue\Attributes\`

// attributes writes PHPAttributes for the class's 13.x queue attributes.
func (g *gen) attributes(c *Class, name string) {
	var fields, other []string
	for _, a := range c.Attributes {
		if !strings.HasPrefix(a.Name, attrNS) {
			continue
		}
		switch a.Name[len(attrNS):] {
		case "Tries", "Timeout", "MaxExceptions":
			if len(a.Arguments) == 1 {
				fields = append(fields, fmt.Sprintf("%s: new(%d),", a.Name[len(attrNS):], argInt(a.Arguments[0])))
			}
		case "Backoff":
			var xs []string
			for _, arg := range a.Arguments {
				v, err := phpser.DecodeString(arg.Value)
				if err != nil {
					continue
				}
				if v.Kind() == phpser.KindArray {
					for _, e := range v.Entries() {
						xs = append(xs, strconv.FormatInt(e.Value.Int(), 10))
					}
				} else {
					xs = append(xs, strconv.FormatInt(v.Int(), 10))
				}
			}
			fields = append(fields, "Backoff: []int{"+strings.Join(xs, ", ")+"},")
		case "FailOnTimeout", "DeleteWhenMissingModels":
			on := true
			if len(a.Arguments) == 1 {
				if v, err := phpser.DecodeString(a.Arguments[0].Value); err == nil {
					on = v.Truthy()
				}
			}
			if on {
				fields = append(fields, a.Name[len(attrNS):]+": true,")
			}
		case "UniqueFor":
			if !c.Unique() {
				other = append(other, a.Name)
			}
		default:
			other = append(other, a.Name)
		}
	}
	for _, o := range other {
		g.comment("", fmt.Sprintf("%s: #[%s] has no Go counterpart in laraq.Attributes.", name, shortName(o)))
	}
	if len(fields) == 0 {
		return
	}
	g.imports["github.com/laraq/laraq"] = true
	g.printf("// PHPAttributes are the class's queue attributes, which Laravel 13 reads.\nfunc (%s) PHPAttributes() laraq.Attributes {\n\treturn laraq.Attributes{\n", name)
	for _, f := range fields {
		g.printf("\t\t%s\n", f)
	}
	g.printf("\t}\n}\n\n")
}

func argInt(a Argument) int64 {
	v, err := phpser.DecodeString(a.Value)
	if err != nil {
		return 0
	}
	return v.Int()
}

func (g *gen) enum(class string) {
	name := g.enums[class]
	e := g.m.Enum(class)
	g.comment("", fmt.Sprintf("%s is the PHP enum %s; a value is a case name.", name, class))
	g.printf("type %s string\n\n", name)
	if e != nil && len(e.Cases) > 0 {
		g.printf("// The cases of %s.\nconst (\n", class)
		used := map[string]bool{}
		for _, k := range e.Cases {
			cn := name + goFieldName(k.Name, used)
			g.printf("\t%s %s = %s", cn, name, strconv.Quote(k.Name))
			if k.Value != "" {
				g.printf(" // %s", k.Value)
			}
			g.printf("\n")
		}
		g.printf(")\n\n")
	}
	g.printf("// PHPClass names the PHP enum.\nfunc (%s) PHPClass() string { return %s }\n\n", name, rawString(class))
}

func (g *gen) writeHelpers() {
	if g.helpers["string"] {
		g.imports["strconv"] = true
		g.imports["github.com/laraq/laraq/phpser"] = true
		g.printf(`// laraqPHPString is PHP's string conversion of a scalar, as a lock key is built from it.
func laraqPHPString(v *phpser.Value) string {
	switch {
	case v == nil:
		return ""
	case v.Kind() == phpser.KindInt:
		return strconv.FormatInt(v.Int(), 10)
	case v.Kind() == phpser.KindBool:
		if v.Bool() {
			return "1"
		}
		return ""
	case v.Kind() == phpser.KindFloat:
		return strconv.FormatFloat(v.Float(), 'G', -1, 64)
	}
	return v.Str()
}

`)
	}
	if g.helpers["seconds"] {
		g.imports["time"] = true
		g.imports["github.com/laraq/laraq/phpser"] = true
		g.printf(`// laraqPHPSeconds is a number of seconds a PHP property holds (null: none).
func laraqPHPSeconds(v *phpser.Value) time.Duration {
	switch {
	case v == nil:
		return 0
	case v.Kind() == phpser.KindInt:
		return time.Duration(v.Int()) * time.Second
	case v.Kind() == phpser.KindFloat:
		return time.Duration(v.Float() * float64(time.Second))
	}
	return 0
}

`)
	}
}

// rawString quotes a class name as a Go raw string (class names hold no backquote).
func rawString(s string) string {
	if strings.ContainsAny(s, "`\r") {
		return strconv.Quote(s)
	}
	return "`" + s + "`"
}
