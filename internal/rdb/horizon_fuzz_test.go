package rdb

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/redis/go-redis/v9"
)

// FuzzHorizonRetryStatus runs horizon_retry_status.lua on arbitrary retried_by values.
// The script must never fail (it runs inside the worker's acknowledgement pipeline). For
// a value in the form PHP's json_encode writes (which is how Horizon stores it), the
// result must be what Horizon's json_decode / Arr::set / json_encode gives, modelled by
// payload.Value (PHP's json_decode($s, true) and json_encode).
func FuzzHorizonRetryStatus(f *testing.F) {
	for _, s := range []string{
		`[{"id":"R1","status":"pending","retried_at":1700000000}]`,
		`[{"id":"R0","status":"failed","retried_at":1},{"id":"R1","status":"pending","retried_at":2}]`,
		`[{"id":"R1","retried_at":1}]`, `[{"id":"R1"}]`, `[[],{"id":"R1","status":"x"}]`, `["s",{"id":"R1"}]`,
		`[{"id":"R\/1","status":"pending","x":{"a":[1,"]}"]}}]`, `[{"0":"a","id":"R1"}]`, `[]`, `{}`, `0`, ``,
		`[{"id":`, `[{"id":"R1","status":"pending"} ]`, `[{"id":"\u00e9","status":"p"}]`, `[{"id":1}]`, `null`,
	} {
		f.Add(s, "R1", false)
	}
	f.Add(`[{"id":"\u00e9","status":"p"}]`, "é", true)
	c := testenv.RedisServer(f).Client(f, 0)
	prefix := "lq" + testenv.RandomName(4) + "_horizon:"
	h, err := NewHorizon(HorizonOptions{Prefix: prefix})
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	if err := h.LoadScripts(ctx, c); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { c.Del(ctx, prefix+"P") })
	f.Fuzz(func(t *testing.T, raw, id string, failed bool) {
		status := "completed"
		if failed {
			status = "failed"
		}
		key := prefix + "P"
		c.Del(ctx, key)
		if err := c.HSet(ctx, key, "retried_by", raw).Err(); err != nil {
			t.Fatal(err)
		}
		p := c.Pipeline()
		j := HorizonJob{ID: id, RetryOf: "P"}
		h.retryStatus(ctx, p, &j, status)
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("script failed on %q: %v", raw, err)
		}
		got, err := c.HGet(ctx, key, "retried_by").Result()
		if err != nil {
			t.Fatal(err)
		}
		want, ok := phpRetryStatus(raw, id, status)
		if ok && got != want {
			t.Fatalf("retried_by %q, id %q: got %q, Horizon writes %q", raw, id, got, want)
		}
	})
}

// phpRetryStatus is Horizon's update of a canonical retried_by list: ok is false when
// raw is not what json_encode writes for a list (no claim is made then).
func phpRetryStatus(raw, id, status string) (string, bool) {
	if raw == "" || raw == "0" {
		return raw, true // falsy: Horizon does not touch it
	}
	v, err := payload.DecodeValue([]byte(raw))
	if err != nil || v.Kind != payload.KindArray || !v.IsList() {
		return "", false
	}
	if enc, err := v.AppendJSON(nil, 0); err != nil || string(enc) != raw {
		return "", false
	}
	for i := range v.Items {
		e := &v.Items[i].Value
		if e.Kind != payload.KindArray {
			if e.Kind == payload.KindString {
				return "", false // PHP throws on $retry['id'] of a string
			}
			continue
		}
		if got := e.Get("id"); got != nil && got.Kind == payload.KindString && got.Str == id {
			e.Set("status", payload.Value{Kind: payload.KindString, Str: status})
		}
	}
	out, err := v.AppendJSON(nil, 0)
	if err != nil {
		return "", false
	}
	return string(out), true
}

// FuzzParseHorizonCommand reads arbitrary command list entries: no panic, and an entry
// accepted has a command class.
func FuzzParseHorizonCommand(f *testing.F) {
	for _, s := range []string{
		`{"command":"Laravel\\Horizon\\SupervisorCommands\\Terminate","options":{"status":1}}`,
		`{"command":"X","options":[]}`, `{"command":""}`, `{}`, `[]`, `null`, `not json`, `{"command":5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := ParseHorizonCommand(raw)
		if err != nil {
			return
		}
		if c.Command == "" {
			t.Fatalf("%q: accepted without a command", raw)
		}
		if len(c.Options) > 0 && !json.Valid(c.Options) {
			t.Fatalf("%q: options %q", raw, c.Options)
		}
	})
}

// FuzzHorizonJobFromPayload describes arbitrary payloads: no panic; an accepted payload
// has the id Horizon keys it by (uuid ?? id).
func FuzzHorizonJobFromPayload(f *testing.F) {
	for _, s := range []string{sampleS8, sampleS12, sampleS8r, `{"uuid":"u","silenced":true,"retry_of":"p","tags":["a"]}`,
		`{"id":5,"silenced":"0"}`, `{"uuid":null,"id":"i"}`, `{}`, `[]`, `{"silenced":`, `{"uuid":"u","retry_of":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		j, err := HorizonJobFromPayload(raw, "redis", "default")
		if err != nil {
			return
		}
		env, err := payload.Parse(raw)
		if err != nil {
			t.Fatalf("%q: described but does not parse: %v", raw, err)
		}
		want := env.UUID
		if want == "" {
			want = env.ID
		}
		if j.ID == "" || j.ID != want || string(j.Payload) != string(raw) {
			t.Fatalf("%q: %+v", raw, j)
		}
	})
}

// TestHorizonRerunNoScript empties the script cache of a private server under a pipeline
// of Horizon calls: the calls fail with NOSCRIPT, having done nothing, and RerunNoScript
// runs each once.
func TestHorizonRerunNoScript(t *testing.T) {
	srv, err := testenv.StartRedis()
	if err != nil {
		testenv.Need(t, false, "redis-server: %v", err)
	}
	t.Cleanup(srv.Stop)
	c := srv.Client(t, 0)
	ctx := context.Background()
	h, _ := NewHorizon(HorizonOptions{Prefix: "h:"})
	if err := c.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	job := HorizonJob{ID: "J1", Name: "N", Connection: "redis", Queue: "default", Payload: []byte("{}")}
	p := c.Pipeline()
	_ = h.Pushed(ctx, p, job)
	p.Set(ctx, "other", "1", 0)
	_ = h.Completed(ctx, p, job)
	h.Metrics(ctx, p, "default", "N", h.Now())
	cmds, err := p.Exec(ctx)
	if err == nil || !redis.HasErrorPrefix(err, "NOSCRIPT") {
		t.Fatalf("exec: %v, want NOSCRIPT", err)
	}
	if n, _ := c.Exists(ctx, "h:J1", "h:recent_jobs").Result(); n != 0 {
		t.Fatalf("a refused call wrote %d keys", n)
	}
	n, err := h.RerunNoScript(ctx, c, cmds)
	if err != nil || n != 4 {
		t.Fatalf("rerun %d calls: %v", n, err)
	}
	got, _ := c.HGetAll(ctx, "h:J1").Result()
	if got["status"] != "completed" || got["id"] != "J1" {
		t.Errorf("job hash %v", got)
	}
	if tp, _ := c.HGet(ctx, "h:job:N", "throughput").Result(); tp != "1" {
		t.Errorf("throughput %q", tp)
	}
	// The scripts are loaded again: the next pipeline needs no rerun.
	p = c.Pipeline()
	_ = h.Released(ctx, p, job)
	if _, err := p.Exec(ctx); err != nil {
		t.Fatalf("after rerun: %v", err)
	}
}
