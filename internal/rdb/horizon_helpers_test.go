package rdb

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// hkey is everything about one key of any type: what the Horizon tests assert.
type hkey = testenv.DumpedKey

// hstate maps key names, prefix removed, to their contents.
type hstate map[string]hkey

func hhash(expireAt int64, kv ...string) hkey {
	k := hkey{Type: "hash", Hash: map[string]string{}, ExpireAt: expireAt}
	for i := 0; i < len(kv); i += 2 {
		k.Hash[kv[i]] = kv[i+1]
	}
	return k
}

func hset(members ...string) hkey {
	s := append([]string(nil), members...)
	sort.Strings(s)
	return hkey{Type: "set", Set: s}
}

// hzset takes member, score, member, score, … (scores as float64 or parseable strings).
func hzset(expireAt int64, pairs ...any) hkey {
	k := zset(pairs...)
	return hkey{Type: "zset", ZSet: k.ZSet, ExpireAt: expireAt}
}

func hlist(items ...string) hkey { return hkey{Type: "list", List: items} }

// dumpAll reads every key under prefix.
func dumpAll(t testing.TB, c redis.UniversalClient, prefix string) hstate {
	t.Helper()
	return testenv.DumpKeys(t, c, prefix)
}

// assertSameHState is assertHState for two states that ran the same records a moment
// apart: an expiry set with a relative EXPIRE (StoreTagsForFailedJob's) may differ by the
// second that passed between them.
func assertSameHState(t testing.TB, what string, got, want hstate) {
	t.Helper()
	for k, g := range got {
		if w, ok := want[k]; ok && g.ExpireAt != w.ExpireAt && g.ExpireAt != 0 && w.ExpireAt != 0 && max(g.ExpireAt-w.ExpireAt, w.ExpireAt-g.ExpireAt) <= 2 {
			g.ExpireAt = w.ExpireAt
			got[k] = g
		}
	}
	assertHState(t, what, got, want)
}

func assertHState(t testing.TB, what string, got, want hstate) {
	t.Helper()
	norm := func(s hstate) hstate {
		out := hstate{}
		for k, v := range s {
			if len(v.Hash) == 0 {
				v.Hash = nil
			}
			if len(v.ZSet) == 0 {
				v.ZSet = nil
			}
			if len(v.Set) == 0 {
				v.Set = nil
			}
			if len(v.List) == 0 {
				v.List = nil
			}
			out[k] = v
		}
		return out
	}
	g, w := norm(got), norm(want)
	if reflect.DeepEqual(g, w) {
		return
	}
	var b strings.Builder
	names := map[string]bool{}
	for k := range g {
		names[k] = true
	}
	for k := range w {
		names[k] = true
	}
	sorted := make([]string, 0, len(names))
	for k := range names {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		gv, gok := g[k]
		wv, wok := w[k]
		if gok && wok && reflect.DeepEqual(gv, wv) {
			continue
		}
		gj, _ := json.Marshal(gv)
		wj, _ := json.Marshal(wv)
		if !gok {
			gj = []byte("(missing)")
		}
		if !wok {
			wj = []byte("(not expected)")
		}
		fmt.Fprintf(&b, "\n  %s\n     got: %s\n    want: %s", k, gj, wj)
	}
	t.Errorf("%s: key state differs:%s", what, b.String())
}

// hzEnv is one test's Horizon on a real redis-server with its own prefix and a fixed
// clock: T is "<unix>.1234".
type hzEnv struct {
	c      *redis.Client
	h      *Horizon
	prefix string
	at     time.Time
	unix   int64
	T, NT  string // T and -T as Horizon writes them
}

func newHzEnv(t testing.TB, trim HorizonTrim) *hzEnv {
	t.Helper()
	return newHzEnvAt(t, trim, time.Now().Unix())
}

// newHzEnvAt is newHzEnv with the clock at unix seconds (and .1234): tests that compare
// two environments' keys give both the same clock.
func newHzEnvAt(t testing.TB, trim HorizonTrim, unix int64) *hzEnv {
	t.Helper()
	c := testenv.RedisServer(t).Client(t, 0)
	prefix := "lq" + testenv.RandomName(4) + "_horizon:"
	at := time.Unix(unix, 123400000)
	h, err := NewHorizon(HorizonOptions{Prefix: prefix, Trim: trim, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.LoadScripts(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if keys, _ := testenv.Keys(context.Background(), c, escapeGlob(prefix)); len(keys) > 0 {
			c.Del(context.Background(), keys...)
		}
	})
	return &hzEnv{c: c, h: h, prefix: prefix, at: at, unix: unix,
		T: fmt.Sprintf("%d.1234", unix), NT: fmt.Sprintf("-%d.1234", unix)}
}

// in returns the expiry Horizon computes for a TTL of minutes.
func (e *hzEnv) in(minutes int) int64 { return e.unix + int64(minutes)*60 }

// pipe runs fn's commands in one pipeline and fails the test on any error.
func (e *hzEnv) pipe(t testing.TB, fn func(p redis.Pipeliner) error) []redis.Cmder {
	t.Helper()
	ctx := context.Background()
	p := e.c.Pipeline()
	if err := fn(p); err != nil {
		t.Fatal(err)
	}
	cmds, err := p.Exec(ctx)
	if err != nil && !isNil(err) {
		for _, c := range cmds {
			if c.Err() != nil && !isNil(c.Err()) {
				t.Fatalf("pipeline: %v: %v", c.Args(), c.Err())
			}
		}
	}
	return cmds
}

func (e *hzEnv) seed(t testing.TB, s hstate) {
	t.Helper()
	ctx := context.Background()
	for k, v := range s {
		key := e.prefix + k
		var err error
		switch v.Type {
		case "hash":
			err = e.c.HSet(ctx, key, v.Hash).Err()
		case "set":
			err = e.c.SAdd(ctx, key, toAny(v.Set)...).Err()
		case "zset":
			zs := make([]redis.Z, len(v.ZSet))
			for i, m := range v.ZSet {
				zs[i] = redis.Z{Score: m.Score, Member: m.Member}
			}
			err = e.c.ZAdd(ctx, key, zs...).Err()
		case "list":
			err = e.c.RPush(ctx, key, toAny(v.List)...).Err()
		case "string":
			err = e.c.Set(ctx, key, *v.Str, 0).Err()
		}
		if err == nil && v.ExpireAt > 0 {
			err = e.c.ExpireAt(ctx, key, time.Unix(v.ExpireAt, 0)).Err()
		}
		if err != nil {
			t.Fatalf("seed %s: %v", key, err)
		}
	}
}

func (e *hzEnv) dump(t testing.TB) hstate { return dumpAll(t, e.c, e.prefix) }

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func with(s hstate, more hstate) hstate {
	out := hstate{}
	for k, v := range s {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}
