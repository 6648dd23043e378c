package laraq

import "reflect"

// Types returns the Go type declared for each PHP class (by Handle, HandleClass with a
// struct type, or Declare), by class name: what a start-up check compares with the
// classes' facts (phpclass.CheckTypes). The map is a copy.
func (j *Jobs) Types() map[string]reflect.Type {
	if j == nil {
		return nil
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	out := make(map[string]reflect.Type, len(j.types))
	for c, t := range j.types {
		out[c] = t
	}
	return out
}
