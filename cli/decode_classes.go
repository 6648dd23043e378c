package cli

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/laraq/laraq/encryption"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpclass"
	"github.com/laraq/laraq/phpser"
)

// `laraq decode --classes FILE` adds what the payload alone cannot say, from the class's
// facts: each property's visibility, and the properties PHP left out of the command
// because they held their default (9.4+ SerializesModels) or were never set.

// classFacts is the "class_facts" member decode adds to a payload's document.
type classFacts struct {
	Class         string          `json:"class"`
	Laravel       string          `json:"laravel,omitempty"`
	Serialization string          `json:"serialization"`
	Properties    []factsProperty `json:"properties"`
	// NotInClass are properties the command holds that the class does not declare
	// (another release's, or a class changed since).
	NotInClass []string `json:"not_in_class,omitempty"`
}

type factsProperty struct {
	Name       string `json:"name"`
	Visibility string `json:"visibility"`
	// InPayload: the command holds it. LeftOut: it does not, and PHP's unserialize()
	// gives it its Default. Uninitialized: a typed property without default that was
	// never set.
	InPayload     bool            `json:"in_payload"`
	LeftOut       bool            `json:"left_out,omitempty"`
	Uninitialized bool            `json:"uninitialized,omitempty"`
	Default       json.RawMessage `json:"default,omitempty"`
	Type          string          `json:"type,omitempty"`
	From          string          `json:"from,omitempty"`
}

// commandOf finds the serialized command of a payload, decrypted with enc when it is
// encrypted; "" when there is none to read (not a payload, a string job, an encrypted
// command without the key).
func commandOf(data []byte, enc *encryption.Encrypter) (string, error) {
	body := bytes.TrimSpace(data)
	if len(body) == 0 || body[0] != '{' {
		return "", nil
	}
	env, err := payload.Parse(body)
	if err != nil || env.Command == "" {
		return "", nil // Readable reports what is wrong with the payload
	}
	if !encryption.IsEncryptedCommand(env.Command) {
		return env.Command, nil
	}
	if enc == nil {
		return "", nil
	}
	return enc.DecryptCommand(env.Command)
}

// factsOf describes the command's class from the manifest; nil when the command is no
// object of a class the manifest has.
func factsOf(m *phpclass.Manifest, command string) (*classFacts, error) {
	if command == "" {
		return nil, nil
	}
	v, err := phpser.DecodeString(command)
	if err != nil {
		return nil, nil
	}
	return factsOfValue(m, v)
}

// factsOfValue describes a decoded command's class from the manifest; nil when the
// command is no object of a class the manifest has.
func factsOfValue(m *phpclass.Manifest, v *phpser.Value) (*classFacts, error) {
	if v == nil || v.Kind() != phpser.KindObject {
		return nil, nil
	}
	c := m.Class(v.Class())
	if c == nil {
		return nil, nil
	}
	f := &classFacts{Class: c.Name, Laravel: m.Laravel, Serialization: c.Serialization}
	have := map[string]bool{}
	for _, e := range v.Entries() {
		if e.Key.IsInt() {
			continue
		}
		have[e.Key.Str()] = true
		name, _, _ := phpser.UnmangleName(e.Key.Str())
		if p := c.Property(name); p == nil || p.Key != e.Key.Str() {
			f.NotInClass = append(f.NotInClass, name)
		}
	}
	for i := range c.Properties {
		p := &c.Properties[i]
		if p.Unwritten {
			continue
		}
		fp := factsProperty{Name: p.Name, Visibility: p.Visibility, InPayload: have[p.Key], Type: p.Type}
		if p.From != c.Name {
			fp.From = p.From
		}
		if d := p.DefaultValue(); d != nil {
			r, err := phpser.MarshalReadable(d)
			if err != nil {
				return nil, fmt.Errorf("the default of %s::$%s: %v", c.Name, p.Name, err)
			}
			fp.Default = r
		}
		if !fp.InPayload {
			fp.LeftOut = p.DefaultValue() != nil
			fp.Uninitialized = !p.HasDefault
		}
		f.Properties = append(f.Properties, fp)
	}
	return f, nil
}

// withClassFacts appends the class_facts member to decode's indented document of a
// payload.
func withClassFacts(doc []byte, f *classFacts) ([]byte, error) {
	trimmed := bytes.TrimRight(doc, " \t\r\n")
	if len(trimmed) == 0 || trimmed[len(trimmed)-1] != '}' {
		return doc, nil
	}
	raw, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	var ind bytes.Buffer
	if err := json.Indent(&ind, raw, "  ", "  "); err != nil {
		return nil, err
	}
	body := bytes.TrimRight(trimmed[:len(trimmed)-1], " \t\r\n")
	out := append([]byte(nil), body...)
	if !bytes.HasSuffix(body, []byte("{")) {
		out = append(out, ',')
	}
	out = append(out, "\n  \"class_facts\": "...)
	out = append(out, ind.Bytes()...)
	return append(out, "\n}\n"...), nil
}
