package phpclass

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/laraq/laraq/phpser"
)

// Format is the manifest format this package writes and reads.
const Format = 1

// Manifest is the facts of a set of PHP classes, as one Laravel release and PHP version
// gave them: one entry per class, and the enums their properties name.
type Manifest struct {
	// Format is the manifest format (Format).
	Format int `json:"format"`
	// Laravel is the framework release the autoloader gave ("12.67.0"; "" when unknown),
	// and LaravelFrom where that came from (Illuminate\Foundation\Application::VERSION,
	// composer's installed packages, the tree's TAG file, dpkg).
	Laravel     string `json:"laravel"`
	LaravelFrom string `json:"laravel_from,omitempty"`
	// PHP is PHP_VERSION of the php that read the classes.
	PHP     string  `json:"php"`
	Classes []Class `json:"classes"`
	Enums   []Enum  `json:"enums,omitempty"`
}

// Class is what PHP's reflection says of one class.
type Class struct {
	Name string `json:"name"` // as declared, e.g. App\Jobs\SendInvoice
	File string `json:"file,omitempty"`
	Line int    `json:"line,omitempty"`
	// Parents are the parent classes, nearest first.
	Parents []string `json:"parents,omitempty"`
	// Interfaces are every interface the class implements (ReflectionClass::getInterfaceNames).
	Interfaces []string `json:"interfaces"`
	// Traits are the traits the class and its parents use, flattened in PHP's order: each
	// trait, then the traits it uses itself.
	Traits     []Trait     `json:"traits,omitempty"`
	Attributes []Attribute `json:"attributes,omitempty"`
	// Serialization is how serialize() writes the object: SerializesModels' __serialize
	// (properties in getProperties() order, a parent's private ones left out, and from
	// Laravel 9.4 those still at their default), native (every property, the parents'
	// first), or a class's own __serialize or __sleep.
	Serialization string `json:"serialization"`
	// OrderVerified says Properties' order was read back from a real serialize() of the
	// class; otherwise it is PHP's rule for the class, and OrderNote says why.
	OrderVerified bool   `json:"order_verified"`
	OrderNote     string `json:"order_note,omitempty"`
	// Properties are the non-static properties in the order serialize() writes them,
	// followed by those it never writes (Unwritten).
	Properties []Property `json:"properties"`
	// Methods are the methods of the class that decide how Laravel queues and runs it
	// (tries, backoff, retryUntil, uniqueId, uniqueFor, displayName, middleware, failed,
	// debounceId, ...), with their source.
	Methods []Method `json:"methods,omitempty"`
}

// Values of Class.Serialization.
const (
	SerializesModelsSerialization = "serializes_models"
	NativeSerialization           = "native"
	OwnSerialization              = "custom __serialize"
	InheritedSerialization        = "__serialize"
	SleepSerialization            = "__sleep"
)

// Trait is one trait a class uses, and who uses it (the class, a parent or a trait).
type Trait struct {
	Name   string `json:"name"`
	UsedBy string `json:"used_by"`
}

// Attribute is a PHP attribute (#[Name(args)]) on a class or property.
type Attribute struct {
	Name      string     `json:"name"`
	Arguments []Argument `json:"arguments,omitempty"`
}

// Argument is one argument of an attribute: Name for a named argument, Value the
// serialize() text of its value ("" when it could not be had, Error says why).
type Argument struct {
	Name  string `json:"name,omitempty"`
	Value string `json:"value,omitempty"`
	Error string `json:"error,omitempty"`
}

// Property is one non-static property of a class.
type Property struct {
	Name string `json:"name"`
	// Key is the name serialize() writes: mangled for protected ("\0*\0name") and private
	// ("\0Class\0name") properties.
	Key        string `json:"key"`
	Visibility string `json:"visibility"` // public, protected or private
	// DeclaredBy is the class reflection names as declaring the property; From where it
	// comes from: that class, or the trait that declares it.
	DeclaredBy string `json:"declared_by"`
	From       string `json:"from"`
	// Type is the declared type as reflection prints it ("?int", "string|int",
	// "App\\Models\\User"); "" for an untyped property. TypeNames says what each class
	// or builtin in it is.
	Type      string     `json:"type,omitempty"`
	Nullable  bool       `json:"nullable,omitempty"`
	TypeNames []TypeName `json:"type_names,omitempty"`
	Readonly  bool       `json:"readonly,omitempty"`
	Promoted  bool       `json:"promoted,omitempty"`
	// HasDefault says the property has a declared default: an untyped property always
	// has one (null unless written), a typed one only with an initializer, a promoted
	// typed one never. A typed property without default is left out of serialize()
	// until it is set.
	HasDefault bool `json:"has_default"`
	// Default is serialize() of the default (DefaultBase64 when it is not UTF-8);
	// DefaultValue decodes it.
	Default       string `json:"default,omitempty"`
	DefaultBase64 string `json:"default_base64,omitempty"`
	DefaultError  string `json:"default_error,omitempty"`
	// Unwritten: serialize() never writes the property (a parent's private property
	// under SerializesModels); PHP's unserialize() leaves it at its default.
	Unwritten  bool        `json:"unwritten,omitempty"`
	Attributes []Attribute `json:"attributes,omitempty"`

	def *phpser.Value
}

// TypeName is one class or builtin of a declared type, and what it is: builtin, enum,
// model (an Eloquent model), collection (an Eloquent collection), date (a
// DateTimeInterface), class, interface, relative (self, static, parent) or unknown (not
// loadable).
type TypeName struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// Method is a method of a class, with its source as written (doc comment included).
type Method struct {
	Name       string `json:"name"`
	DeclaredBy string `json:"declared_by"`
	File       string `json:"file,omitempty"`
	Line       int    `json:"line,omitempty"`
	Source     string `json:"source,omitempty"`
}

// Enum is a PHP enum a property's type or default names: its backing type ("string",
// "int", "" for a pure enum) and its cases in order.
type Enum struct {
	Name    string `json:"name"`
	Backing string `json:"backing,omitempty"`
	Cases   []Case `json:"cases"`
}

// Case is one enum case; Value is serialize() of a backed case's value.
type Case struct {
	Name  string `json:"name"`
	Value string `json:"value,omitempty"`
}

// Class returns the class named name (a leading backslash is ignored; PHP class names
// are case-insensitive, so another case matches when no class has this exact one), or
// nil.
func (m *Manifest) Class(name string) *Class {
	if m == nil {
		return nil
	}
	name = strings.TrimPrefix(name, `\`)
	for i := range m.Classes {
		if m.Classes[i].Name == name {
			return &m.Classes[i]
		}
	}
	for i := range m.Classes {
		if strings.EqualFold(m.Classes[i].Name, name) {
			return &m.Classes[i]
		}
	}
	return nil
}

// Enum returns the enum named name, or nil.
func (m *Manifest) Enum(name string) *Enum {
	if m == nil {
		return nil
	}
	name = strings.TrimPrefix(name, `\`)
	for i := range m.Enums {
		if strings.EqualFold(m.Enums[i].Name, name) {
			return &m.Enums[i]
		}
	}
	return nil
}

// Write writes the manifest as indented JSON.
func (m *Manifest) Write(w io.Writer) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// Load reads and checks a manifest file (see Parse).
func Load(path string) (*Manifest, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("phpclass: %w", err)
	}
	m, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// maxManifest bounds a manifest's size: an application's classes fit in far less.
const maxManifest = 64 << 20

// Parse reads a manifest and checks it: the format, PHP names, visibilities matching
// the mangled keys, defaults that decode, no class or property twice. Errors say where
// (classes[2] (App\Jobs\X).properties[1]: ...).
func Parse(data []byte) (*Manifest, error) {
	if len(data) > maxManifest {
		return nil, fmt.Errorf("phpclass: the manifest is %d bytes, more than %d", len(data), maxManifest)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("phpclass: not a class manifest: %v", err)
	}
	if dec.More() {
		return nil, errors.New("phpclass: trailing data after the manifest")
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	return &m, nil
}

// classNameRE is PHP's syntax of a namespaced class name.
var classNameRE = regexp.MustCompile(`^(?:[A-Za-z_]|[^\x00-\x7F])(?:[A-Za-z0-9_]|[^\x00-\x7F])*(?:\\(?:[A-Za-z_]|[^\x00-\x7F])(?:[A-Za-z0-9_]|[^\x00-\x7F])*)*$`)

// propNameRE is PHP's syntax of a property name.
var propNameRE = regexp.MustCompile(`^(?:[A-Za-z_]|[^\x00-\x7F])(?:[A-Za-z0-9_]|[^\x00-\x7F])*$`)

func validClass(s string) bool { return classNameRE.MatchString(s) && utf8.ValidString(s) }

func (m *Manifest) check() error {
	if m.Format != Format {
		return fmt.Errorf("phpclass: manifest format %d; this laraq reads format %d (run 'laraq classes' again)", m.Format, Format)
	}
	seen := map[string]int{}
	for i := range m.Classes {
		c := &m.Classes[i]
		where := fmt.Sprintf("classes[%d]", i)
		if !validClass(c.Name) {
			return fmt.Errorf("phpclass: %s: %q is not a PHP class name", where, c.Name)
		}
		where += " (" + c.Name + ")"
		if j, dup := seen[strings.ToLower(c.Name)]; dup {
			return fmt.Errorf("phpclass: %s: the class is also classes[%d]", where, j)
		}
		seen[strings.ToLower(c.Name)] = i
		if err := c.check(); err != nil {
			return fmt.Errorf("phpclass: %s%w", where, err)
		}
	}
	enums := map[string]bool{}
	for i := range m.Enums {
		e := &m.Enums[i]
		if !validClass(e.Name) || enums[strings.ToLower(e.Name)] {
			return fmt.Errorf("phpclass: enums[%d]: %q is not a PHP enum name or is listed twice", i, e.Name)
		}
		enums[strings.ToLower(e.Name)] = true
		for j, k := range e.Cases {
			if !propNameRE.MatchString(k.Name) || !utf8.ValidString(k.Name) {
				return fmt.Errorf("phpclass: enums[%d] (%s).cases[%d]: %q is not a case name", i, e.Name, j, k.Name)
			}
			if k.Value != "" {
				if _, err := phpser.DecodeString(k.Value); err != nil {
					return fmt.Errorf("phpclass: enums[%d] (%s).cases[%d]: value: %v", i, e.Name, j, err)
				}
			}
		}
	}
	return nil
}

func (c *Class) check() error {
	switch c.Serialization {
	case SerializesModelsSerialization, NativeSerialization, OwnSerialization, InheritedSerialization, SleepSerialization:
	default:
		return fmt.Errorf(": serialization %q: want %s, %s, %q, %s or %s", c.Serialization,
			SerializesModelsSerialization, NativeSerialization, OwnSerialization, InheritedSerialization, SleepSerialization)
	}
	for _, lists := range [][]string{c.Parents, c.Interfaces} {
		for _, n := range lists {
			if !validClass(n) {
				return fmt.Errorf(": %q is not a PHP class name", n)
			}
		}
	}
	keys := map[string]int{}
	for i := range c.Properties {
		p := &c.Properties[i]
		if err := p.check(); err != nil {
			return fmt.Errorf(".properties[%d] (%s): %w", i, p.Name, err)
		}
		if j, dup := keys[p.Key]; dup {
			return fmt.Errorf(".properties[%d] (%s): the property is also properties[%d]", i, p.Name, j)
		}
		keys[p.Key] = i
	}
	for i, a := range c.Attributes {
		if !validClass(a.Name) {
			return fmt.Errorf(".attributes[%d]: %q is not a PHP class name", i, a.Name)
		}
		for j, arg := range a.Arguments {
			if arg.Value == "" {
				continue
			}
			if _, err := phpser.DecodeString(arg.Value); err != nil {
				return fmt.Errorf(".attributes[%d] (%s).arguments[%d]: %v", i, a.Name, j, err)
			}
		}
	}
	return nil
}

func (p *Property) check() error {
	if !propNameRE.MatchString(p.Name) || !utf8.ValidString(p.Name) {
		return fmt.Errorf("%q is not a PHP property name", p.Name)
	}
	name, vis, class := phpser.UnmangleName(p.Key)
	if name != p.Name || vis.String() != p.Visibility || (vis == phpser.Private && !validClass(class)) {
		return fmt.Errorf("key %q is not the %s property %s", p.Key, p.Visibility, p.Name)
	}
	if !p.HasDefault {
		if p.Default != "" || p.DefaultBase64 != "" {
			return errors.New("a default, but has_default is false")
		}
		return nil
	}
	text := p.Default
	if p.DefaultBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(p.DefaultBase64)
		if err != nil || p.Default != "" {
			return errors.New("default_base64 is not base64, or comes with default")
		}
		text = string(b)
	}
	if text == "" {
		if p.DefaultError == "" {
			return errors.New("has_default without a default")
		}
		return nil
	}
	v, err := phpser.DecodeString(text)
	if err != nil {
		return fmt.Errorf("default: %v", err)
	}
	p.def = v
	return nil
}

// DefaultValue returns the declared default: nil when the property has none (or PHP
// could not serialize it, DefaultError).
func (p *Property) DefaultValue() *phpser.Value { return p.def }

// Vis returns Visibility as phpser's.
func (p *Property) Vis() phpser.Visibility {
	switch p.Visibility {
	case "protected":
		return phpser.Protected
	case "private":
		return phpser.Private
	}
	return phpser.Public
}

// Property returns the property named name (plain name; several private ones of one
// name: the one serialize() writes first), or nil.
func (c *Class) Property(name string) *Property {
	for i := range c.Properties {
		if c.Properties[i].Name == name {
			return &c.Properties[i]
		}
	}
	return nil
}

// Method returns the method named name (PHP method names are case-insensitive), or nil.
func (c *Class) Method(name string) *Method {
	for i := range c.Methods {
		if strings.EqualFold(c.Methods[i].Name, name) {
			return &c.Methods[i]
		}
	}
	return nil
}

// Implements reports whether the class implements the interface.
func (c *Class) Implements(iface string) bool { return contains(c.Interfaces, iface) }

// Uses reports whether the class (or a parent, or a trait) uses the trait.
func (c *Class) Uses(trait string) bool {
	for _, t := range c.Traits {
		if strings.EqualFold(t.Name, trait) {
			return true
		}
	}
	return false
}

// Attribute returns the class attribute named name, or nil.
func (c *Class) Attribute(name string) *Attribute {
	for i := range c.Attributes {
		if strings.EqualFold(c.Attributes[i].Name, name) {
			return &c.Attributes[i]
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// Names of the framework's interfaces and traits a job class's facts are read by.
const (
	ShouldQueue                   = `Illuminate\Contracts\Queue\ShouldQueue`
	ShouldBeUnique                = `Illuminate\Contracts\Queue\ShouldBeUnique`
	ShouldBeUniqueUntilProcessing = `Illuminate\Contracts\Queue\ShouldBeUniqueUntilProcessing`
	ShouldBeEncrypted             = `Illuminate\Contracts\Queue\ShouldBeEncrypted`
	ShouldQueueAfterCommit        = `Illuminate\Contracts\Queue\ShouldQueueAfterCommit`
	SerializesModels              = `Illuminate\Queue\SerializesModels`
	InteractsWithQueue            = `Illuminate\Queue\InteractsWithQueue`
	BusQueueable                  = `Illuminate\Bus\Queueable`
	FoundationQueueable           = `Illuminate\Foundation\Queue\Queueable`
	Batchable                     = `Illuminate\Bus\Batchable`
)

// PayloadAttributes are the Laravel 13 class attributes (Illuminate\Queue\Attributes)
// that Queue::createObjectPayload and UniqueLock read through getAttributeValue, by the
// property each stands for: the payload's metadata and the unique lock's lifetime. A
// laraq Dispatcher given the class facts reads them as 13.x does.
var PayloadAttributes = map[string]string{
	`Illuminate\Queue\Attributes\Tries`:                   "tries",
	`Illuminate\Queue\Attributes\Backoff`:                 "backoff",
	`Illuminate\Queue\Attributes\Timeout`:                 "timeout",
	`Illuminate\Queue\Attributes\MaxExceptions`:           "maxExceptions",
	`Illuminate\Queue\Attributes\FailOnTimeout`:           "failOnTimeout",
	`Illuminate\Queue\Attributes\DeleteWhenMissingModels`: "deleteWhenMissingModels",
	`Illuminate\Queue\Attributes\UniqueFor`:               "uniqueFor",
}

// Unique reports whether the class implements ShouldBeUnique (its lock is taken at
// dispatch), UniqueUntilProcessing whether the lock goes before it runs.
func (c *Class) Unique() bool { return c.Implements(ShouldBeUnique) }

// UniqueUntilProcessing reports whether the class implements ShouldBeUniqueUntilProcessing.
func (c *Class) UniqueUntilProcessing() bool { return c.Implements(ShouldBeUniqueUntilProcessing) }

// Encrypted reports whether the class implements ShouldBeEncrypted.
func (c *Class) Encrypted() bool { return c.Implements(ShouldBeEncrypted) }

// SerializesModels reports whether serialize() goes through SerializesModels'
// __serialize (which, from Laravel 9.4, leaves out the properties at their default).
func (c *Class) SerializesModels() bool { return c.Serialization == SerializesModelsSerialization }

// Queueable reports whether the class uses Illuminate\Bus\Queueable (onQueue(),
// delay(), chains: the properties laraq's Queueable stands for).
func (c *Class) Queueable() bool { return c.Uses(BusQueueable) }
