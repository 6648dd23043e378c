package payload

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/laraq/laraq/phpser"
)

const jsonSpace = " \t\r\n"

// Readable turns a queue payload into the indented document `laraq decode` prints and
// `laraq work --forward` sends: the envelope as it is (key order, numbers, {} and []
// untouched) with data.command, the PHP-serialized job, shown readably as phpser's
// readable form writes it ({"@class": "FQCN", "prop": …} objects, {"@enum": "C:Case"},
// {"@binary": "…"} for strings that are not UTF-8). A bare serialized value, or a JSON
// string holding one, is accepted too. notes are remarks worth a line on a terminal (an
// encrypted command shown as stored).
//
// An encrypted data.command (ShouldBeEncrypted) is shown as stored, with a note, unless
// WithDecrypter gives the application's Encrypter: then it is decrypted and shown
// readably, and a command that does not decrypt is an error.
func Readable(data []byte, opts ...ReadableOption) (doc []byte, notes []string, err error) {
	var ro readableOptions
	for _, o := range opts {
		if o != nil {
			o(&ro)
		}
	}
	lead := len(data) - len(bytes.TrimLeft(data, jsonSpace))
	body := bytes.TrimRight(data[lead:], jsonSpace)
	if len(body) == 0 {
		return nil, nil, errors.New("empty input, expected a JSON payload or a serialized value")
	}
	var compact []byte
	switch body[0] {
	case '{':
		w := envelopeWalker{dec: json.NewDecoder(bytes.NewReader(body)), base: lead, size: len(body), command: isObjectJob(body), decrypter: ro.decrypter}
		w.dec.UseNumber()
		if err := w.walk(); err != nil {
			return nil, nil, err
		}
		compact, notes = w.out, w.notes
	case '"':
		var s string
		if err := json.Unmarshal(body, &s); err != nil {
			return nil, nil, fmt.Errorf("payload: %v", err)
		}
		r, err := ro.readableCommand(s, "")
		if err == errEncrypted {
			return nil, nil, errors.New("the value is encrypted (ShouldBeEncrypted); decrypting it needs the APP_KEY")
		}
		if err != nil {
			return nil, nil, err
		}
		compact = r
	default:
		v, err := phpser.Decode(body)
		if err != nil {
			if !looksSerialized(body) {
				return nil, nil, fmt.Errorf("the input is neither JSON nor a PHP-serialized value: it starts with %q", preview(body))
			}
			return nil, nil, commandError("", err, lead)
		}
		if compact, err = phpser.MarshalReadable(v); err != nil {
			return nil, nil, commandError("", err, lead)
		}
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, nil, fmt.Errorf("internal error indenting output: %v", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), notes, nil
}

// isObjectJob reports whether data.command is a serialized command: the payload of
// an object job has `job` CallQueuedHandler@call and data.commandName beside
// data.command. A string job (Class@method) carries the caller's data, which may hold
// a "command" of its own; that is left as it is.
func isObjectJob(body []byte) bool {
	var env map[string]json.RawMessage
	if json.Unmarshal(body, &env) != nil {
		return true // the walk reports what is wrong with the JSON
	}
	var job string
	if raw, ok := env["job"]; ok && json.Unmarshal(raw, &job) == nil && job == CallQueuedHandler {
		return true
	}
	var data map[string]json.RawMessage
	if json.Unmarshal(env["data"], &data) != nil {
		return false
	}
	_, named := data["commandName"]
	return named
}

// errEncrypted marks a ShouldBeEncrypted command: not malformed, just unreadable
// without the application key.
var errEncrypted = errors.New("encrypted")

// encrypted reports whether s is what Laravel's Encrypter writes: base64 of a JSON
// object with iv, value and mac.
func encrypted(s string) bool {
	if !strings.HasPrefix(s, "eyJ") {
		return false
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return false
	}
	var e struct{ IV, Value, MAC *string }
	return json.Unmarshal(raw, &e) == nil && e.IV != nil && e.Value != nil && e.MAC != nil
}

// readableCommand decodes a serialized command and returns its readable JSON.
func readableCommand(s, where string) ([]byte, error) {
	v, err := phpser.DecodeString(s)
	if err != nil {
		if encrypted(s) {
			return nil, errEncrypted
		}
		return nil, commandError(where, err, 0)
	}
	out, err := phpser.MarshalReadable(v)
	if err != nil {
		return nil, commandError(where, err, 0)
	}
	return out, nil
}

// commandError words a decoding error as "<where>: <what> at offset N" (where is
// empty for a bare serialized value).
func commandError(where string, err error, base int) error {
	msg := strings.TrimPrefix(err.Error(), "phpser: ")
	var se *phpser.SyntaxError
	if errors.As(err, &se) {
		msg = fmt.Sprintf("%s at offset %d", se.Msg, se.Offset+base)
	}
	if where == "" {
		return errors.New(msg)
	}
	return errors.New(where + ": " + msg)
}

// envelopeWalker copies the payload JSON token by token, so that key order, number
// spelling and {} versus [] stay exactly as they are, and replaces data.command.
type envelopeWalker struct {
	dec     *json.Decoder
	out     []byte
	base    int  // bytes trimmed before the JSON, for error offsets
	size    int  // length of the JSON text
	command bool // data.command is a serialized command to show
	notes   []string
	// decrypter, when set, decrypts an encrypted data.command.
	decrypter Decrypter
}

func (w *envelopeWalker) walk() error {
	tok, err := w.token()
	if err != nil {
		return err
	}
	if err := w.value(tok, nil); err != nil {
		return err
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return fmt.Errorf("payload: unexpected data after the JSON object at offset %d", w.base+int(w.dec.InputOffset()))
	}
	return nil
}

func (w *envelopeWalker) token() (json.Token, error) {
	tok, err := w.dec.Token()
	if err == nil {
		return tok, nil
	}
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return nil, fmt.Errorf("payload: %s at offset %d", strings.TrimPrefix(se.Error(), "json: "), w.base+int(se.Offset))
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return nil, fmt.Errorf("payload: unexpected end of JSON input at offset %d", w.base+w.size)
	}
	return nil, fmt.Errorf("payload: %v", err)
}

// value copies one JSON value whose first token is tok. path holds the object keys
// leading to it; only ["data", "command"] is rewritten.
func (w *envelopeWalker) value(tok json.Token, path []string) error {
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			w.out = append(w.out, '{')
			for i := 0; w.dec.More(); i++ {
				kt, err := w.token()
				if err != nil {
					return err
				}
				key, ok := kt.(string)
				if !ok {
					return fmt.Errorf("payload: expected an object key at offset %d", w.base+int(w.dec.InputOffset()))
				}
				if i > 0 {
					w.out = append(w.out, ',')
				}
				w.out = appendReadableJSONString(w.out, key)
				w.out = append(w.out, ':')
				vt, err := w.token()
				if err != nil {
					return err
				}
				sub := append(path[:len(path):len(path)], key)
				if s, isStr := vt.(string); isStr && w.command && len(sub) == 2 && sub[0] == "data" && sub[1] == "command" {
					r, err := readableOptions{decrypter: w.decrypter}.readableCommand(s, "data.command")
					if err == nil && w.decrypter != nil && isEncryptedCommand(s) && encrypted(s) {
						w.notes = append(w.notes, "data.command is encrypted (ShouldBeEncrypted) and shown decrypted")
					}
					if err == errEncrypted {
						// Show the envelope anyway, with the command as stored.
						w.notes = append(w.notes, "data.command is encrypted (ShouldBeEncrypted) and shown as stored; decrypting it needs the APP_KEY (--app-key or --env-file)")
						w.out = appendReadableJSONString(w.out, s)
						continue
					}
					if err != nil {
						return err
					}
					w.out = append(w.out, r...)
					continue
				}
				if err := w.value(vt, sub); err != nil {
					return err
				}
			}
			if _, err := w.token(); err != nil {
				return err
			}
			w.out = append(w.out, '}')
		case '[':
			w.out = append(w.out, '[')
			for i := 0; w.dec.More(); i++ {
				if i > 0 {
					w.out = append(w.out, ',')
				}
				et, err := w.token()
				if err != nil {
					return err
				}
				// Inside a list no key path leads to data.command any more.
				if err := w.value(et, append(path[:len(path):len(path)], "[]")); err != nil {
					return err
				}
			}
			if _, err := w.token(); err != nil {
				return err
			}
			w.out = append(w.out, ']')
		default:
			return fmt.Errorf("payload: unexpected %q at offset %d", string(t), w.base+int(w.dec.InputOffset()))
		}
	case string:
		w.out = appendReadableJSONString(w.out, t)
	case json.Number:
		w.out = append(w.out, t...)
	case bool:
		w.out = strconv.AppendBool(w.out, t)
	case nil:
		w.out = append(w.out, "null"...)
	default:
		return fmt.Errorf("payload: unexpected token %v", t)
	}
	return nil
}

// appendReadableJSONString writes s the way the readable form writes strings: '/'
// and non-ASCII unescaped. json.Decoder hands over valid UTF-8 only, so the result
// is always a plain JSON string.
func appendReadableJSONString(dst []byte, s string) []byte {
	b, err := phpser.MarshalReadable(phpser.String(s))
	if err != nil || len(b) == 0 || b[0] != '"' {
		q, _ := json.Marshal(s)
		return append(dst, q...)
	}
	return append(dst, b...)
}

// looksSerialized reports whether b starts like a serialize() value: a type letter and
// a colon (or "N;").
func looksSerialized(b []byte) bool {
	if len(b) >= 2 && b[0] == 'N' && b[1] == ';' {
		return true
	}
	return len(b) >= 2 && strings.IndexByte("bidsaOCErR", b[0]) >= 0 && b[1] == ':'
}

// preview is the first bytes of b for a message.
func preview(b []byte) string {
	if len(b) > 24 {
		return string(b[:24]) + "…"
	}
	return string(b)
}
