package payload

import (
	"bytes"
	"errors"
)

// Member is one member of a payload's top-level object, as byte ranges of the JSON text.
type member struct {
	name                 string // unescaped
	keyStart             int    // the key's opening quote
	valueStart, valueEnd int    // the value
	escaped              bool
	valueIsString        bool
	strStart, strEnd     int // a string value's content, without quotes
}

// topLevel scans a payload's top-level object and returns its members in order. The
// whole text is validated as strictly as Parse does.
func topLevel(raw []byte) ([]member, error) {
	s := &scanner{buf: raw}
	if err := s.expect("", '{'); err != nil {
		return nil, err
	}
	var out []member
	s.ws()
	if s.pos < len(s.buf) && s.buf[s.pos] == '}' {
		s.pos++
	} else {
		for {
			s.ws()
			var m member
			m.keyStart = s.pos
			ks, ke, esc, err := s.str("")
			if err != nil {
				return nil, err
			}
			m.name = string(raw[ks:ke])
			if esc {
				m.name = string(unescape(nil, raw[ks:ke]))
			}
			if err := s.expect(m.name, ':'); err != nil {
				return nil, err
			}
			s.ws()
			m.valueStart = s.pos
			if s.pos < len(s.buf) && s.buf[s.pos] == '"' {
				m.strStart, m.strEnd, m.escaped, err = s.str(m.name)
				m.valueIsString = true
			} else {
				err = s.skip(m.name, 1)
			}
			if err != nil {
				return nil, err
			}
			m.valueEnd = s.pos
			out = append(out, m)
			done, err := s.next(m.name, '}')
			if err != nil {
				return nil, err
			}
			if done {
				break
			}
		}
	}
	s.ws()
	if s.pos != len(s.buf) {
		return nil, s.errf("", "unexpected %s after the payload", s.describe())
	}
	return out, nil
}

// TopLevelString returns the value of a string member of a payload's top-level object
// (the last one of that name, as PHP's json_decode keeps): ok is false when there is
// none or it is not a string.
func TopLevelString(raw []byte, key string) (value string, ok bool, err error) {
	ms, err := topLevel(raw)
	if err != nil {
		return "", false, err
	}
	for i := len(ms) - 1; i >= 0; i-- {
		m := ms[i]
		if m.name != key {
			continue
		}
		if !m.valueIsString {
			return "", false, nil
		}
		if m.escaped {
			return string(unescape(nil, raw[m.strStart:m.strEnd])), true, nil
		}
		return string(raw[m.strStart:m.strEnd]), true, nil
	}
	return "", false, nil
}

// StringMember is a top-level string member to set.
type StringMember struct{ Key, Value string }

// SetTopLevelStrings sets string members of a payload's top-level object as PHP's
// `$payload[$key] = $value` would before json_encode with Laravel's flags: a member that
// is there gets the new value where it stands; one that is not is added, in the order
// given, right before the member named before (the end of the object when there is no
// such member). Every other byte stays as it was. A payload that is not a JSON object is
// an error, and raw is not changed.
func SetTopLevelStrings(raw []byte, before string, set ...StringMember) ([]byte, error) {
	ms, err := topLevel(raw)
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 && len(set) > 0 {
		return nil, errors.New("payload: the top-level object is empty")
	}
	type edit struct {
		at, end int
		text    []byte
	}
	var edits []edit
	insertAt, insertSep := -1, false
	for _, m := range ms {
		if m.name == before && insertAt < 0 {
			insertAt = m.keyStart
		}
	}
	if insertAt < 0 {
		// After the last value, before the closing brace.
		insertAt, insertSep = ms[len(ms)-1].valueEnd, true
	}
	var inserted []byte
	for _, kv := range set {
		value, err := AppendJSONString(nil, kv.Value, JSONUnescapedUnicode)
		if err != nil {
			return nil, err
		}
		found := false
		for i := len(ms) - 1; i >= 0; i-- {
			if ms[i].name == kv.Key {
				edits = append(edits, edit{at: ms[i].valueStart, end: ms[i].valueEnd, text: value})
				found = true
				break
			}
		}
		if found {
			continue
		}
		key, err := AppendJSONString(nil, kv.Key, JSONUnescapedUnicode)
		if err != nil {
			return nil, err
		}
		if insertSep {
			inserted = append(inserted, ',')
		}
		inserted = append(append(append(inserted, key...), ':'), value...)
		if !insertSep {
			inserted = append(inserted, ',')
		}
	}
	if len(inserted) > 0 {
		edits = append(edits, edit{at: insertAt, end: insertAt, text: inserted})
	}
	if len(edits) == 0 {
		return raw, nil
	}
	// Apply from the end so that earlier offsets stay valid.
	for i := 1; i < len(edits); i++ {
		for j := i; j > 0 && edits[j].at > edits[j-1].at; j-- {
			edits[j], edits[j-1] = edits[j-1], edits[j]
		}
	}
	out := bytes.Clone(raw)
	for _, e := range edits {
		out = append(out[:e.at], append(append([]byte{}, e.text...), out[e.end:]...)...)
	}
	return out, nil
}
