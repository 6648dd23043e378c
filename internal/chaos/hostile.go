package chaos

import (
	"encoding/json"
	"fmt"
	"strings"
)

// HostileKinds are the kinds of hostile payload Hostile builds. Each carries its job's
// key somewhere in its bytes, so the accounting finds it wherever it ends: a run, a
// failed row, or queues:NAME:invalid.
var HostileKinds = []string{
	"notjson",      // not JSON at all: Laravel's pop script fails on it (and PHP loses it)
	"noattempts",   // a Laravel envelope without "attempts": the pop script fails too
	"attemptsstr",  // "attempts": "x", not numeric
	"array",        // a JSON array instead of an object
	"deepjson",     // JSON nested 3000 deep (cjson stops at 1000)
	"truncated",    // data.command cut in the middle of the serialized object
	"deepcommand",  // data.command nested 5000 arrays deep
	"huge",         // a ChaosJob with a 1 MiB property
	"unknownclass", // a well-formed job of a class no worker knows
	"badutf8",      // a ChaosJob whose string property holds bytes that are not UTF-8
	"floatattempt", // "attempts": 2.5
}

// Hostile returns a hostile payload of kind carrying key.
func Hostile(kind, key string) ([]byte, error) {
	okActions := `a:1:{i:0;s:2:"ok";}`
	switch kind {
	case "notjson":
		return []byte(`{"uuid": not json at all ` + key + ` <<<`), nil
	case "noattempts":
		e := envelope(key, serializedChaosJob(key, okActions, ""))
		delete(e, "attempts")
		return marshalEnvelope(e)
	case "attemptsstr":
		e := envelope(key, serializedChaosJob(key, okActions, ""))
		e["attempts"] = "x"
		return marshalEnvelope(e)
	case "array":
		return []byte(`[0, "` + key + `", {"attempts": 0}]`), nil
	case "deepjson":
		return []byte(`{"uuid":"` + key + `","attempts":0,"job":"x","data":` +
			strings.Repeat("[", 3000) + `"` + key + `"` + strings.Repeat("]", 3000) + `}`), nil
	case "truncated":
		cmd := serializedChaosJob(key, okActions, "")
		return marshalEnvelope(envelope(key, cmd[:len(cmd)/2]))
	case "deepcommand":
		deep := strings.Repeat("a:1:{i:0;", 5000) + "N;" + strings.Repeat("}", 5000)
		return marshalEnvelope(envelope(key, serializedChaosJob(key, deep, "")))
	case "huge":
		return marshalEnvelope(envelope(key, serializedChaosJob(key, okActions, strings.Repeat("x", 1<<20))))
	case "unknownclass":
		cls := `App\Jobs\NoSuchChaosJob`
		cmd := fmt.Sprintf(`O:%d:"%s":1:{s:3:"key";s:%d:"%s";}`, len(cls), cls, len(key), key)
		e := envelope(key, cmd)
		e["displayName"] = cls
		e["data"] = map[string]any{"commandName": cls, "command": cmd}
		return marshalEnvelope(e)
	case "badutf8":
		p, err := marshalEnvelope(envelope(key, serializedChaosJob(key, okActions, "\xff\xfe bad \xc3")))
		if err != nil {
			return nil, err
		}
		// encoding/json replaced the invalid bytes; put them back as raw bytes.
		return []byte(strings.Replace(string(p), `\ufffd\ufffd bad \ufffd`, "\xff\xfe bad \xc3", 1)), nil
	case "floatattempt":
		e := envelope(key, serializedChaosJob(key, okActions, ""))
		e["attempts"] = 2.5
		return marshalEnvelope(e)
	}
	return nil, fmt.Errorf("chaos: unknown hostile kind %q", kind)
}

// serializedChaosJob is the serialize() text of a ChaosJob with key, the given actions
// (serialized) and, when not empty, a public blob property.
func serializedChaosJob(key, actions, blob string) string {
	n := 2
	body := fmt.Sprintf(`s:3:"key";s:%d:"%s";s:7:"actions";%s`, len(key), key, actions)
	if blob != "" {
		n++
		body += fmt.Sprintf(`s:4:"blob";s:%d:"%s";`, len(blob), blob)
	}
	return fmt.Sprintf(`O:%d:"%s":%d:{%s}`, len(ChaosClass), ChaosClass, n, body)
}

// envelope is a Laravel 8 job envelope around a serialized command (keys in Laravel's
// order are not needed here: hostile payloads are judged on survival, not bytes).
func envelope(key, command string) map[string]any {
	return map[string]any{
		"uuid": key, "displayName": ChaosClass, "job": `Illuminate\Queue\CallQueuedHandler@call`,
		"maxTries": nil, "maxExceptions": nil, "failOnTimeout": false, "backoff": nil, "timeout": nil,
		"retryUntil": nil, "data": map[string]any{"commandName": ChaosClass, "command": command},
		"id": key, "attempts": 0,
	}
}

func marshalEnvelope(e map[string]any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(b.String(), "\n")), nil
}
