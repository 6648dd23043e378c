package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// Laravel Context (11.x+). ContextServiceProvider adds the request's Context to every
// payload it creates, under "illuminate:log:context": {"data": {name: serialize(value)},
// "hidden": {…}}, the key left out when both are empty (Repository::dehydrate); a worker
// hydrates it before the job runs (JobProcessing) and so carries it into every job the
// job dispatches, the next job of its chain included. A laraq worker cannot run PHP's
// Context, but it carries the same bytes: when it continues a chain, the next job gets
// the context the running job came with, as PHP's dehydrate writes it again. Handlers
// read it with JobInfo.Context.

// LogContextKey is the payload key Laravel's Context travels under.
const LogContextKey = "illuminate:log:context"

// LogContext is the Laravel Context a job was dispatched with (Context::add and
// Context::addHidden), each value unserialized from its serialize() text. Keys are
// strings (an integer key in decimal). Eloquent models are ModelIdentifier objects, as
// SerializesModels leaves them.
type LogContext struct {
	Data   map[string]*phpser.Value
	Hidden map[string]*phpser.Value
}

// Context returns the job's Laravel Context: empty (nil maps) when the payload carries
// none. An error says which entry could not be read; PHP's worker would fail to hydrate
// the same payload.
func (j *JobInfo) Context() (LogContext, error) {
	var out LogContext
	if j.Payload == nil {
		return out, nil
	}
	raw, ok := j.Payload.Get(LogContextKey)
	if !ok {
		return out, nil
	}
	lc, err := parseLogContext(raw)
	if err != nil {
		return out, err
	}
	decode := func(part string, ents []contextEntry) (map[string]*phpser.Value, error) {
		if len(ents) == 0 {
			return nil, nil
		}
		m := make(map[string]*phpser.Value, len(ents))
		for _, e := range ents {
			v, err := phpser.DecodeString(e.value)
			if err != nil {
				return nil, fmt.Errorf("%s.%s.%s: %w", LogContextKey, part, e.key, err)
			}
			m[e.key] = v
		}
		return m, nil
	}
	if out.Data, err = decode("data", lc.data); err != nil {
		return LogContext{}, err
	}
	if out.Hidden, err = decode("hidden", lc.hidden); err != nil {
		return LogContext{}, err
	}
	return out, nil
}

// contextEntry is one entry of data or hidden: its key as PHP's array holds it and the
// serialize() text of its value.
type contextEntry struct {
	key   string
	isInt bool
	value string
}

// logContext is a payload's context as Repository::hydrate reads it.
type logContext struct {
	data, hidden []contextEntry
}

func (lc logContext) empty() bool { return len(lc.data) == 0 && len(lc.hidden) == 0 }

// parseLogContext reads the context value of a payload as json_decode($payload, true) and
// hydrate() see it: `$context['data'] ?? []` and `$context['hidden'] ?? []` (a value that
// is no object has neither), keys in stored order (a reserved copy's cjson order
// included), the last of repeated keys winning at the place of the first, as in a PHP
// array. A part that is neither an object, a list nor null, or an entry that is no
// string, is an error: PHP's unserialize() would throw on it.
func parseLogContext(raw []byte) (logContext, error) {
	var lc logContext
	top, err := readJSONEntries(raw)
	if err != nil || top == nil {
		return lc, err
	}
	for _, part := range []struct {
		name string
		dst  *[]contextEntry
	}{{"data", &lc.data}, {"hidden", &lc.hidden}} {
		var v json.RawMessage
		for _, e := range top.entries {
			if e.key == part.name {
				v = e.value
			}
		}
		if v == nil {
			continue
		}
		ents, err := readJSONEntries(v)
		if err != nil {
			return lc, fmt.Errorf("%s.%s: %w", LogContextKey, part.name, err)
		}
		if ents == nil {
			if s := bytes.TrimSpace(v); !bytes.Equal(s, []byte("null")) {
				return lc, fmt.Errorf("%s.%s is %s, not an object", LogContextKey, part.name, truncateBytes(s, 32))
			}
			continue
		}
		for _, e := range ents.entries {
			var s string
			if err := json.Unmarshal(e.value, &s); err != nil {
				return lc, fmt.Errorf("%s.%s.%s is %s, not the serialize() text of a value", LogContextKey, part.name, e.key,
					truncateBytes(e.value, 32))
			}
			*part.dst = append(*part.dst, contextEntry{key: e.key, isInt: e.isInt, value: s})
		}
		*part.dst = mergeRenumber(*part.dst)
	}
	return lc, nil
}

// mergeRenumber is array_merge([], $a): integer keys become 0, 1, … in their order, string
// keys stay (Repository::add merges, so hydrate renumbers integer keys).
func mergeRenumber(ents []contextEntry) []contextEntry {
	n := 0
	for i := range ents {
		if ents[i].isInt {
			ents[i].key = strconv.Itoa(n)
			n++
		}
	}
	return ents
}

// appendJSON writes the context as dehydrate() returns it and createPayload encodes it
// (json_encode with JSON_UNESCAPED_UNICODE): {"data":…,"hidden":…}, each a list when its
// keys are 0…n-1 in order (an empty one is []), else an object.
func (lc logContext) appendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"data":`...)
	dst, err := appendContextPart(dst, lc.data)
	if err != nil {
		return nil, err
	}
	dst = append(dst, `,"hidden":`...)
	if dst, err = appendContextPart(dst, lc.hidden); err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

func appendContextPart(dst []byte, ents []contextEntry) ([]byte, error) {
	list := true
	for i, e := range ents {
		if !e.isInt || e.key != strconv.Itoa(i) {
			list = false
			break
		}
	}
	open, end := byte('{'), byte('}')
	if list {
		open, end = '[', ']'
	}
	dst = append(dst, open)
	var err error
	for i, e := range ents {
		if i > 0 {
			dst = append(dst, ',')
		}
		if !list {
			if dst, err = payload.AppendJSONString(dst, e.key, payload.JSONUnescapedUnicode); err != nil {
				return nil, err
			}
			dst = append(dst, ':')
		}
		if dst, err = payload.AppendJSONString(dst, e.value, payload.JSONUnescapedUnicode); err != nil {
			return nil, err
		}
	}
	return append(dst, end), nil
}

// jsonEntries is a JSON object or list as PHP's json_decode(…, true) makes it an array:
// ordered entries, object keys that are canonical decimals turned into integer keys.
type jsonEntries struct {
	entries []jsonEntry
}

type jsonEntry struct {
	key   string
	isInt bool
	value json.RawMessage
}

// readJSONEntries reads a JSON object or list; nil (and no error) for any other value.
func readJSONEntries(raw []byte) (*jsonEntries, error) {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 || s[0] != '{' && s[0] != '[' {
		return nil, nil
	}
	out := &jsonEntries{}
	if s[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(s, &items); err != nil {
			return nil, err
		}
		for i, it := range items {
			out.entries = append(out.entries, jsonEntry{key: strconv.Itoa(i), isInt: true, value: it})
		}
		return out, nil
	}
	dec := json.NewDecoder(bytes.NewReader(s))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	index := map[string]int{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, errors.New("object key is not a string")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		_, isInt := phpArrayIntKey(key)
		if i, dup := index[key]; dup {
			out.entries[i].value = v
			continue
		}
		index[key] = len(out.entries)
		out.entries = append(out.entries, jsonEntry{key: key, isInt: isInt, value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// phpArrayIntKey reports whether PHP turns the string key s into an integer array key: a
// canonical decimal integer (no leading zeros or "+", "-0" excluded) within int64.
func phpArrayIntKey(s string) (int64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	digits := s
	if s[0] == '-' {
		digits = s[1:]
	}
	if digits == "" || digits[0] == '0' && (len(digits) > 1 || s[0] == '-') {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func truncateBytes(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

// CarryLogContext gives next, a payload just built on release rel, the context of the
// running job's payload from, as PHP's payload hook would write it while that job runs
// (ContextServiceProvider, 11.0+): after the keys createPayloadArray's hooks see (data,
// createdAt), before the Redis driver's id and attempts. It returns next unchanged when
// there is nothing to carry.
func CarryLogContext(rel Release, from *payload.Envelope, next []byte, nextID string) ([]byte, error) {
	if !rel.AtLeast(11, 0, 0) || from == nil {
		return next, nil
	}
	raw, ok := from.Get(LogContextKey)
	if !ok {
		return next, nil
	}
	lc, err := parseLogContext(raw)
	if err != nil || lc.empty() {
		return next, err
	}
	return insertLogContext(next, nextID, lc)
}

// insertLogContext puts `,"illuminate:log:context":…` before the `,"id":"ID","attempts":0`
// the Redis driver appends.
func insertLogContext(p []byte, id string, lc logContext) ([]byte, error) {
	tail, err := payload.AppendJSONString([]byte(`,"id":`), id, payload.JSONUnescapedUnicode)
	if err != nil {
		return nil, err
	}
	tail = append(tail, `,"attempts":0`...)
	at := bytes.LastIndex(p, tail)
	if at < 0 {
		return nil, errors.New("the payload has no id and attempts to put the context before")
	}
	value, err := lc.appendJSON(nil)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(p)+len(LogContextKey)+len(value)+4)
	out = append(out, p[:at]...)
	out = append(out, `,"`+LogContextKey+`":`...)
	out = append(out, value...)
	return append(out, p[at:]...), nil
}
