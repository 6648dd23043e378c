package payload

import (
	"strconv"
	"unsafe"
)

// callQueuedHandlerJSON is CallQueuedHandler as JSON text (two escaped backslashes).
const callQueuedHandlerJSON = `"Illuminate\\Queue\\CallQueuedHandler@call"`

// Parse reads a Laravel job payload of any version from 5.5 to 13.x, as pushed by PHP,
// re-encoded by the pop script's cjson, written by Horizon or by queue:retry.
//
// It is tolerant where Laravel's own reader is: key order is free, unknown keys are kept
// in Fields, uuid may be missing, [] and {} are interchangeable, integers may be written
// in cjson's exponent form (1.2345678901234e+14) or as numeric strings, backoff may be
// a number or a comma string, the legacy keys timeoutAt and delay are understood. It is
// strict about JSON itself and about types that no PHP worker could use: a
// non-integral or out-of-range number where an integer is required, a boolean job
// name, and so on are errors of type *Error naming the field and the byte offset.
//
// Parse keeps raw (Envelope.Raw) without copying it.
func Parse(raw []byte) (*Envelope, error) {
	e := &Envelope{Raw: raw}
	p := parser{scanner: scanner{buf: raw}, e: e}
	if err := p.top(); err != nil {
		return nil, err
	}
	return e, nil
}

type parser struct {
	scanner
	e   *Envelope
	key []byte // scratch for keys with escapes
	// strs holds the unescaped strings of the envelope (see stringValue).
	strs []byte

	retryUntil, timeoutAt *int64
}

// slots of Envelope.ints
const (
	slotMaxTries = iota
	slotMaxExceptions
	slotTimeout
	slotRetryUntil
	slotTimeoutAt
	slotDelay
	slotCreatedAt
)

// at fills in the field path of an error raised below a known field.
func at(err error, path string) error {
	if e, ok := err.(*Error); ok && e.Path == "" {
		e.Path = path
	}
	return err
}

func (p *parser) top() error {
	p.ws()
	if p.pos >= len(p.buf) || p.buf[p.pos] != '{' {
		return p.errf("", "a job payload must be a JSON object, found %s", p.describe())
	}
	p.pos++
	p.e.Fields = make([]Field, 0, 16)
	p.ws()
	if p.pos < len(p.buf) && p.buf[p.pos] == '}' {
		p.pos++
	} else {
		for {
			p.ws()
			ks, ke, kesc, err := p.str("")
			if err != nil {
				return at(err, "(key)")
			}
			key := p.buf[ks:ke]
			if kesc {
				p.key = unescape(p.key[:0], key)
				key = p.key
			}
			if err := p.expect("", ':'); err != nil {
				return at(err, string(key))
			}
			p.ws()
			vs := p.pos
			name, err := p.member(key)
			if err != nil {
				return at(err, string(key))
			}
			p.e.Fields = append(p.e.Fields, Field{Key: name, Value: p.buf[vs:p.pos]})
			if done, err := p.next("", '}'); err != nil {
				return at(err, name)
			} else if done {
				break
			}
		}
	}
	p.ws()
	if p.pos != len(p.buf) {
		return p.errf("", "unexpected %s after the payload object", p.describe())
	}
	e := p.e
	if p.retryUntil != nil {
		e.RetryUntil = p.retryUntil
	} else {
		e.RetryUntil = p.timeoutAt
	}
	return nil
}

// member parses the value of one top-level key and returns the key as a string (a
// constant for known keys, so they cost no allocation).
func (p *parser) member(key []byte) (string, error) {
	e := p.e
	var err error
	switch string(key) {
	case "uuid":
		e.UUID, _, err = p.text("uuid", false)
		return "uuid", err
	case "displayName":
		e.DisplayName, _, err = p.text("displayName", true)
		return "displayName", err
	case "job":
		if n := len(callQueuedHandlerJSON); p.pos+n <= len(p.buf) && string(p.buf[p.pos:p.pos+n]) == callQueuedHandlerJSON {
			// The job string of every object job: no allocation.
			e.Job = CallQueuedHandler
			p.pos += len(callQueuedHandlerJSON)
			return "job", nil
		}
		e.Job, _, err = p.text("job", false)
		return "job", err
	case "maxTries":
		e.MaxTries, err = p.int("maxTries", slotMaxTries)
		return "maxTries", err
	case "maxExceptions":
		e.MaxExceptions, err = p.int("maxExceptions", slotMaxExceptions)
		return "maxExceptions", err
	case "timeout":
		e.Timeout, err = p.int("timeout", slotTimeout)
		return "timeout", err
	case "failOnTimeout":
		e.FailOnTimeout, err = p.truthy("failOnTimeout")
		return "failOnTimeout", err
	case "backoff":
		e.Backoff, err = p.backoffValue()
		return "backoff", err
	case "retryUntil":
		p.retryUntil, err = p.int("retryUntil", slotRetryUntil)
		return "retryUntil", err
	case "timeoutAt":
		p.timeoutAt, err = p.int("timeoutAt", slotTimeoutAt)
		return "timeoutAt", err
	case "delay":
		e.Delay, err = p.int("delay", slotDelay)
		return "delay", err
	case "createdAt":
		e.CreatedAt, err = p.int("createdAt", slotCreatedAt)
		return "createdAt", err
	case "data":
		return "data", p.data()
	case "id":
		e.ID, err = p.id()
		return "id", err
	case "attempts":
		var v *int64
		v, err = p.int("attempts", len(e.ints)-1)
		e.Attempts = 0
		if v != nil {
			e.Attempts = *v
		}
		return "attempts", err
	case "pushedAt":
		e.PushedAt, err = p.pushedAt()
		return "pushedAt", err
	case "tags":
		e.Tags, err = p.tags()
		return "tags", err
	}
	if err := p.skip("", 1); err != nil {
		return "", err
	}
	return string(key), nil
}

// text reads a string or null. With numbers true a number is accepted as its literal
// text (displayName is whatever the job's displayName() returned).
func (p *parser) text(path string, numbers bool) (s string, null bool, err error) {
	if p.pos >= len(p.buf) {
		return "", false, p.errf(path, "expected a value, found end of input")
	}
	switch c := p.buf[p.pos]; {
	case c == '"':
		return p.stringValue(path)
	case c == 'n':
		return "", true, p.literal(path)
	case numbers && (c == '-' || c >= '0' && c <= '9'):
		st, en, _, err := p.number(path)
		if err != nil {
			return "", false, err
		}
		return string(p.buf[st:en]), false, nil
	}
	return "", false, p.errf(path, "expected string or null, found %s", p.describe())
}

// stringValue decodes the string at the current position.
func (p *parser) stringValue(path string) (string, bool, error) {
	st, en, esc, err := p.str(path)
	if err != nil {
		return "", false, err
	}
	if st == en {
		return "", false, nil
	}
	if !esc {
		// Parse keeps raw and nobody may modify it (Envelope.Raw): a string without
		// escapes is a view of it, not a copy.
		return unsafe.String(&p.buf[st], en-st), false, nil
	}
	// The strings with escapes of one payload (a job's name, its class, its command:
	// PHP writes every \ of a class name as \\) are unescaped one after the other into
	// one buffer the size of the payload, which they never outgrow (an escape is never
	// shorter than what it stands for), and each is a view of its part. The buffer is
	// the envelope's: never written again once a string is taken from it.
	if p.strs == nil {
		p.strs = make([]byte, 0, len(p.buf))
	}
	from := len(p.strs)
	p.strs = unescape(p.strs, p.buf[st:en])
	if len(p.strs) == from {
		return "", false, nil
	}
	return unsafe.String(&p.strs[from], len(p.strs)-from), false, nil
}

// int reads an integer-valued field: a JSON integer, an integral number in exponent
// form, a numeric string, or null (nil).
func (p *parser) int(path string, slot int) (*int64, error) {
	if p.pos >= len(p.buf) {
		return nil, p.errf(path, "expected a value, found end of input")
	}
	start := p.pos
	var v int64
	var msg string
	switch c := p.buf[p.pos]; {
	case c == 'n':
		return nil, p.literal(path)
	case c == '-' || c >= '0' && c <= '9':
		st, en, isInt, err := p.number(path)
		if err != nil {
			return nil, err
		}
		v, msg = parseIntLiteral(p.buf[st:en], isInt)
	case c == '"':
		st, en, esc, err := p.str(path)
		if err != nil {
			return nil, err
		}
		s := p.buf[st:en]
		if esc {
			s = unescape(nil, s)
		}
		v, msg = parseIntString(s)
	default:
		return nil, p.errf(path, "expected an integer or null, found %s", p.describe())
	}
	if msg != "" {
		return nil, &Error{Path: path, Offset: start, Msg: msg}
	}
	p.e.ints[slot] = v
	return &p.e.ints[slot], nil
}

// truthy reads a flag with PHP's truthiness: false, null, 0, 0.0, "", "0" and an empty
// array are false.
func (p *parser) truthy(path string) (bool, error) {
	if p.pos >= len(p.buf) {
		return false, p.errf(path, "expected a value, found end of input")
	}
	switch c := p.buf[p.pos]; {
	case c == 't', c == 'f', c == 'n':
		err := p.literal(path)
		return c == 't', err
	case c == '"':
		s, _, err := p.stringValue(path)
		return s != "" && s != "0", err
	case c == '-' || c >= '0' && c <= '9':
		st, en, _, err := p.number(path)
		if err != nil {
			return false, err
		}
		f, _ := strconv.ParseFloat(string(p.buf[st:en]), 64)
		return f != 0, nil
	case c == '[' || c == '{':
		// An array or object: true unless empty.
		start := p.pos
		p.pos++
		p.ws()
		empty := p.pos < len(p.buf) && (p.buf[p.pos] == ']' || p.buf[p.pos] == '}')
		p.pos = start
		return !empty, p.skip(path, 1)
	}
	return false, p.errf(path, "invalid value: unexpected %s", p.describe())
}

// backoffValue normalises backoff to the comma string PHP's worker explodes.
func (p *parser) backoffValue() (*string, error) {
	const path = "backoff"
	if p.pos >= len(p.buf) {
		return nil, p.errf(path, "expected a value, found end of input")
	}
	switch c := p.buf[p.pos]; {
	case c == 'n':
		return nil, p.literal(path)
	case c == '"':
		s, _, err := p.stringValue(path)
		p.e.backoff = s
		return &p.e.backoff, err
	case c == '-' || c >= '0' && c <= '9':
		v, err := p.int(path, len(p.e.ints)-1)
		if err != nil {
			return nil, err
		}
		p.e.backoff = strconv.FormatInt(*v, 10)
		return &p.e.backoff, nil
	case c == '[':
		// Not written by Laravel (it joins the list itself) but unambiguous.
		var out []byte
		p.pos++
		p.ws()
		if p.pos < len(p.buf) && p.buf[p.pos] == ']' {
			p.pos++
			p.e.backoff = ""
			return &p.e.backoff, nil
		}
		for n := 0; ; n++ {
			p.ws()
			if n > 0 {
				out = append(out, ',')
			}
			if p.pos < len(p.buf) && p.buf[p.pos] == '"' {
				s, _, err := p.stringValue(path)
				if err != nil {
					return nil, err
				}
				out = append(out, s...)
			} else {
				start := p.pos
				v, err := p.int(path, len(p.e.ints)-1)
				if err != nil {
					return nil, err
				}
				if v == nil {
					return nil, &Error{Path: path, Offset: start, Msg: "null inside the backoff list"}
				}
				out = strconv.AppendInt(out, *v, 10)
			}
			if done, err := p.next(path, ']'); err != nil {
				return nil, err
			} else if done {
				break
			}
		}
		p.e.backoff = string(out)
		return &p.e.backoff, nil
	}
	return nil, p.errf(path, "expected a string, integer or null, found %s", p.describe())
}

// data reads data.commandName, data.command and data.batchId when data is an object
// and those members are strings. String jobs carry arbitrary data, so other shapes are
// kept raw without complaint.
func (p *parser) data() error {
	e := p.e
	start := p.pos
	e.CommandName, e.Command, e.BatchID = "", "", nil // a repeated data key replaces the first
	if p.pos >= len(p.buf) || p.buf[p.pos] != '{' {
		err := p.skip("data", 1)
		e.Data = p.buf[start:p.pos]
		return err
	}
	p.pos++
	p.ws()
	if p.pos < len(p.buf) && p.buf[p.pos] == '}' {
		p.pos++
		e.Data = p.buf[start:p.pos]
		return nil
	}
	for {
		p.ws()
		ks, ke, kesc, err := p.str("data")
		if err != nil {
			return err
		}
		key := p.buf[ks:ke]
		if kesc {
			p.key = unescape(p.key[:0], key)
			key = p.key
		}
		if err := p.expect("data", ':'); err != nil {
			return err
		}
		p.ws()
		var dst *string
		path := "data"
		switch string(key) {
		case "commandName":
			dst, path = &e.CommandName, "data.commandName"
		case "command":
			dst, path = &e.Command, "data.command"
		case "batchId":
			dst, path = &p.e.batchID, "data.batchId"
		}
		if dst != nil && p.pos < len(p.buf) && p.buf[p.pos] == '"' {
			s, _, err := p.stringValue(path)
			if err != nil {
				return err
			}
			*dst = s
			if dst == &p.e.batchID {
				e.BatchID = &p.e.batchID
			}
		} else {
			if dst == &p.e.batchID {
				e.BatchID = nil
			}
			if err := p.skip(path, 2); err != nil {
				return err
			}
		}
		if done, err := p.next("data", '}'); err != nil {
			return err
		} else if done {
			break
		}
	}
	e.Data = p.buf[start:p.pos]
	return nil
}

// id reads id: a string, an integer (Horizon ≤4 used INCR) or null.
func (p *parser) id() (string, error) {
	if p.pos < len(p.buf) && (p.buf[p.pos] == '-' || p.buf[p.pos] >= '0' && p.buf[p.pos] <= '9') {
		start := p.pos
		st, en, isInt, err := p.number("id")
		if err != nil {
			return "", err
		}
		v, msg := parseIntLiteral(p.buf[st:en], isInt)
		if msg != "" {
			return "", &Error{Path: "id", Offset: start, Msg: msg}
		}
		return strconv.FormatInt(v, 10), nil
	}
	s, _, err := p.text("id", false)
	return s, err
}

// pushedAt reads Horizon's pushedAt: a string since Horizon 3, a number before.
func (p *parser) pushedAt() (string, error) {
	s, _, err := p.text("pushedAt", true)
	return s, err
}

// tags reads Horizon's tags: a list of strings, or an object when cjson turned an empty
// list into {} (or PHP wrote a keyed array). Non-string entries are kept as JSON text.
// Tags is nil when the key is absent or not a list, empty (not nil) for [] and {}.
func (p *parser) tags() ([]string, error) {
	const path = "tags"
	if p.pos >= len(p.buf) || (p.buf[p.pos] != '[' && p.buf[p.pos] != '{') {
		return nil, p.skip(path, 1)
	}
	obj := p.buf[p.pos] == '{'
	closing := byte(']')
	if obj {
		closing = '}'
	}
	p.pos++
	p.ws()
	out := []string{} // present but empty is not nil
	if p.pos < len(p.buf) && p.buf[p.pos] == closing {
		p.pos++
		return out, nil
	}
	for {
		p.ws()
		if obj {
			if _, _, _, err := p.str(path); err != nil {
				return nil, err
			}
			if err := p.expect(path, ':'); err != nil {
				return nil, err
			}
			p.ws()
		}
		if p.pos < len(p.buf) && p.buf[p.pos] == '"' {
			s, _, err := p.stringValue(path)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		} else {
			st := p.pos
			if err := p.skip(path, 2); err != nil {
				return nil, err
			}
			out = append(out, string(p.buf[st:p.pos]))
		}
		if done, err := p.next(path, closing); err != nil {
			return nil, err
		} else if done {
			return out, nil
		}
	}
}
