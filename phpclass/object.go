package phpclass

import (
	"fmt"
	"strings"

	"github.com/laraq/laraq/phpser"
)

// Object is the object PHP holds for class c with props set, as `new` and the setters
// would leave it: every property serialize() writes, in its order, at the value props
// gives it or else at its declared default. props name a property by its plain name
// (the manifest knows its visibility) or by the mangled name serialize() writes; a
// typed property without default that props leaves out stays uninitialized, and is
// left out, as PHP leaves it out. A property the class does not have, or one given with
// another visibility, is an error naming it: PHP would add a dynamic property instead.
func (c *Class) Object(props []phpser.Entry) (*phpser.Value, error) {
	given := map[string]*phpser.Value{}
	for i := range props {
		e := &props[i]
		if e.Key.IsInt() {
			return nil, fmt.Errorf("%s: property %d: a property name is a string", c.Name, e.Key.Int())
		}
		name, vis, class := phpser.UnmangleName(e.Key.Str())
		p := c.writtenProperty(name)
		if p == nil {
			return nil, fmt.Errorf("%s has no property $%s%s", c.Name, name, c.similar(name))
		}
		if e.Key.Str() != name { // given mangled: it must be the property's own visibility
			_, _, want := phpser.UnmangleName(p.Key)
			if vis != p.Vis() || (vis == phpser.Private && class != want) {
				return nil, fmt.Errorf("%s: $%s is %s (%q), not as given (%q)", c.Name, name, p.Visibility, p.Key, e.Key.Str())
			}
		}
		if _, dup := given[p.Key]; dup {
			return nil, fmt.Errorf("%s: $%s is given twice", c.Name, name)
		}
		given[p.Key] = &e.Value
	}
	var ents []phpser.Entry
	for i := range c.Properties {
		p := &c.Properties[i]
		if p.Unwritten {
			continue
		}
		v, ok := given[p.Key]
		if !ok {
			if v = p.DefaultValue(); v == nil {
				continue // uninitialized
			}
		}
		ents = append(ents, phpser.Entry{Key: phpser.StrKey(p.Key), Value: *v})
	}
	return phpser.NewObject(c.Name, ents...), nil
}

// Written is what serialize() writes of obj, an Object of c: where omitDefaults (Laravel
// 9.4 and later) and the class uses SerializesModels, without the properties still
// identical (===) to their declared default; otherwise obj itself.
func (c *Class) Written(obj *phpser.Value, omitDefaults bool) *phpser.Value {
	if !omitDefaults || !c.SerializesModels() {
		return obj
	}
	var ents []phpser.Entry
	for _, e := range obj.Entries() {
		if p := c.propertyByKey(e.Key.Str()); p != nil {
			if d := p.DefaultValue(); d != nil && phpser.Identical(e.Value.Deref(), d) {
				continue
			}
		}
		ents = append(ents, e)
	}
	return phpser.NewObject(obj.Class(), ents...)
}

// writtenProperty is the property serialize() writes under this plain name.
func (c *Class) writtenProperty(name string) *Property {
	for i := range c.Properties {
		if c.Properties[i].Name == name && !c.Properties[i].Unwritten {
			return &c.Properties[i]
		}
	}
	return nil
}

func (c *Class) propertyByKey(key string) *Property {
	for i := range c.Properties {
		if c.Properties[i].Key == key {
			return &c.Properties[i]
		}
	}
	return nil
}

// similar names the class's property whose name differs from name in case only.
func (c *Class) similar(name string) string {
	for _, p := range c.Properties {
		if strings.EqualFold(p.Name, name) && !p.Unwritten {
			return " (it has $" + p.Name + ": PHP property names are case-sensitive)"
		}
	}
	return ""
}
