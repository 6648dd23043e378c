package rdb

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/internal/testenv"
)

// FuzzPopNeverLosesAJob pushes arbitrary bytes and pops them on a real redis-server: the
// payload must end up either reserved (and then its reserved copy is exactly the zset
// member) or, byte for byte, in the invalid list. Nothing else may remain.
func FuzzPopNeverLosesAJob(f *testing.F) {
	for _, s := range []string{
		sampleS8, sampleS12, sampleS8r, `{"attempts":"2"}`, `{"attempts":null}`, `{"job":"X@y"}`,
		`[]`, `{}`, `"x"`, `1`, `null`, "not json", "", "\xff\xfe", `{"attempts":1e308}`,
		`{"attempts":0,"a":` + strings.Repeat("[", 1200) + strings.Repeat("]", 1200) + `}`,
	} {
		f.Add([]byte(s))
	}
	srv := testenv.RedisServer(f)
	c := srv.Client(f, 0)
	prefix := testenv.Prefix(f)
	r, err := New(c, Options{Prefix: prefix})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		ctx := context.Background()
		if keys, _ := testenv.Keys(ctx, c, prefix); len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	f.Fuzz(func(t *testing.T, payload []byte) {
		ctx := context.Background()
		q := "f" + testenv.RandomName(8)
		k := r.Keys(q)
		if err := r.Push(ctx, q, payload); err != nil {
			t.Fatal(err)
		}
		job, reserved, err := r.Pop(ctx, q, now)
		if string(job) != string(payload) {
			t.Fatalf("popped %q, pushed %q", job, payload)
		}
		s := dumpState(t, c, prefix, "queues:"+q+"*")
		if reserved != nil {
			if err != nil {
				t.Fatalf("reserved with error %v", err)
			}
			assertState(t, "reserved", s, state{"queues:" + q + ":reserved": zset(string(reserved), now)})
		} else {
			if err == nil {
				t.Fatal("nil reserved without error")
			}
			assertState(t, "invalid", s, state{"queues:" + q + ":invalid": list(string(payload))})
		}
		c.Del(ctx, k.Queue, k.Reserved, k.Notify, k.Invalid)
	})
}

// FuzzQueueNameFromKey checks that a name found in a key maps back to that key.
func FuzzQueueNameFromKey(f *testing.F) {
	for _, s := range []string{"p_queues:default", "p_queues:{x}:notify", "p_queues::delayed", "p_queues:a:b:reserved", "x"} {
		f.Add("p_", s)
	}
	f.Fuzz(func(t *testing.T, prefix, key string) {
		name, ok := QueueNameFromKey(prefix, key)
		if !ok {
			return
		}
		k := NewQueueKeys(prefix, name, false)
		if key != k.Queue && key != k.Delayed && key != k.Reserved && key != k.Notify && key != k.Invalid {
			t.Fatalf("%q: name %q maps to %+v", key, name, k)
		}
		if tagged := NewQueueKeys(prefix, name, true); HasHashTag(name) && tagged != k {
			t.Fatalf("%q: tagged name %q re-wrapped: %+v", key, name, tagged)
		}
	})
}

// FuzzCacheValue feeds arbitrary cache values to the readers; they must not panic, and an
// integer they accept must read back the same after formatting.
func FuzzCacheValue(f *testing.F) {
	for _, s := range []string{"1700000000", "i:5;", "b:1;", "b:0;", "0", "", " 1 ", "1e3", "d:0;", "garbage"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		_ = phpTruthy(v)
		n, err := parseCacheInt(v)
		if err == nil && php.IsNumeric(v) && !strings.ContainsAny(v, ".eE") {
			if m, err := parseCacheInt(strconv.FormatInt(n, 10)); err != nil || m != n {
				t.Fatalf("%q read as %d, which reads back as %d %v", v, n, m, err)
			}
		}
	})
}
