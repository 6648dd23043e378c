package payload

import (
	"testing"
	"time"

	laravelpayloads "github.com/laraq/laraq/testdata/laravel-payloads"
)

// FuzzPrepareForHorizon prepares arbitrary payloads: no panic; an accepted one is a JSON
// object PHP reads, with id equal to uuid and Horizon's four keys last or in place.
func FuzzPrepareForHorizon(f *testing.F) {
	for _, id := range laravelpayloads.IDs() {
		f.Add(sample(f, id), false, false)
	}
	for _, s := range []string{
		`{"uuid":"u","job":"X@y","data":{"a":"\/"},"tags":["t"]}`,
		`{"uuid":"u","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"Illuminate\\Events\\CallQueuedListener","command":"O:36:\"Illuminate\\Events\\CallQueuedListener\":2:{s:5:\"class\";s:1:\"L\";s:4:\"data\";a:1:{i:0;O:1:\"E\":1:{s:1:\"u\";O:45:\"Illuminate\\Contracts\\Database\\ModelIdentifier\":2:{s:5:\"class\";s:1:\"U\";s:2:\"id\";a:2:{i:0;i:1;i:1;s:1:\"x\";}}}}}"}}`,
		`{"uuid":"u","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"Illuminate\\Broadcasting\\BroadcastEvent","command":"O:38:\"Illuminate\\Broadcasting\\BroadcastEvent\":1:{s:5:\"event\";r:1;}"}}`,
		`{"uuid":5}`, `{}`, `[]`, `{"uuid":"u","tags":{"a":"b"},"type":null}`,
	} {
		f.Add([]byte(s), true, false)
	}
	at := time.Unix(1729411372, 393200000)
	f.Fuzz(func(t *testing.T, raw []byte, explicit, silenced bool) {
		o := HorizonPrepare{PushedAt: at, Silenced: silenced, SilencedClasses: []string{"L", "App\\Jobs\\X"}}
		if explicit {
			o.Tags = []string{"t/1"}
		}
		out, err := PrepareForHorizon(raw, o)
		if err != nil {
			return
		}
		v, err := DecodeValue(out)
		if err != nil {
			t.Fatalf("%q: output PHP cannot read: %v", raw, err)
		}
		if id, uuid := v.Get("id"), v.Get("uuid"); id == nil || uuid == nil || id.Str != uuid.Str {
			t.Fatalf("%q: id %v, uuid %v", raw, id, uuid)
		}
		if s := v.Get("silenced"); s == nil || s.Kind != KindBool || (silenced && !s.Bool) {
			t.Fatalf("%q: silenced %v", raw, s)
		}
		if tags := v.Get("tags"); tags == nil || !tags.IsList() {
			t.Fatalf("%q: tags %v", raw, tags)
		}
		if p := v.Get("pushedAt"); p == nil || p.Str != "1729411372.3932" {
			t.Fatalf("%q: pushedAt %v", raw, p)
		}
	})
}
