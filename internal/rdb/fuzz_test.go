package rdb

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
	r, c, prefix := fuzzRDB(f)
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

// fuzzRDB is an RDB on the shared server under a prefix of its own, removed at the end.
func fuzzRDB(f *testing.F) (*RDB, *redis.Client, string) {
	c := testenv.RedisServer(f).Client(f, 0)
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
	return r, c, prefix
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

// FuzzPopTicketReplay pops two arbitrary payloads with a ticket and asks again with the
// same ticket: the second reply must be the first, byte for byte (cjson re-derives each
// reserved copy, so its encoding must not vary between calls), and every payload must
// be reserved or in the invalid list, none twice.
func FuzzPopTicketReplay(f *testing.F) {
	f.Add([]byte(sampleS8), []byte(sampleS12))
	f.Add([]byte(`{"attempts":"2","x":[],"y":{"b":1,"a":2,"c":[1,{}]}}`), []byte("not json"))
	f.Add([]byte(`{"attempts":1e308,"é":"\u00e9\/"}`), []byte(`{"attempts":0,"n":123456789012345}`))
	f.Add([]byte(sampleS8), []byte(sampleS8))
	r, c, _ := fuzzRDB(f)
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ctx := context.Background()
		q := "f" + testenv.RandomName(8)
		k := r.Keys(q)
		mustNoErr(t, r.PushBulk(ctx, q, [][]byte{a, b}))
		tk := Ticket{Owner: "w", Seq: 1, Keep: time.Minute}
		first, err := r.PopTicket(ctx, q, now, 2, tk)
		mustNoErr(t, err)
		again, err := r.PopTicket(ctx, q, now, 2, tk)
		mustNoErr(t, err)
		show := func(jobs []PoppedJob) string {
			var out []string
			for _, j := range jobs {
				reason := ""
				if j.Invalid != nil {
					reason = j.Invalid.Reason
				}
				out = append(out, strconv.Quote(string(j.Job))+" "+strconv.Quote(string(j.Reserved))+" "+strconv.Quote(reason))
			}
			return strings.Join(out, "\n")
		}
		if len(first) != 2 || show(first) != show(again) {
			t.Fatalf("first reply\n%s\nasked again\n%s", show(first), show(again))
		}
		var invalid []string
		for i, j := range first {
			if string(j.Job) != string([][]byte{a, b}[i]) {
				t.Fatalf("job %d is %q", i, j.Job)
			}
			if j.Invalid != nil {
				invalid = append(invalid, string(j.Job))
				continue
			}
			if err := c.ZScore(ctx, k.Reserved, string(j.Reserved)).Err(); err != nil {
				t.Fatalf("reserved copy %q is not a member: %v", j.Reserved, err)
			}
		}
		got, err := c.LRange(ctx, k.Invalid, 0, -1).Result()
		mustNoErr(t, err)
		if strings.Join(got, "\x00") != strings.Join(invalid, "\x00") {
			t.Fatalf("invalid list %q, want %q", got, invalid)
		}
		if n, _ := c.LLen(ctx, k.Queue).Result(); n != 0 {
			t.Fatalf("%d jobs left ready", n)
		}
		c.Del(ctx, k.Queue, k.Reserved, k.Notify, k.Invalid, k.Ticket("w"))
	})
}
