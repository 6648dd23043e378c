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

func TestMain(m *testing.M) { testenv.Main(m) }

// zm is one sorted-set member.
type zm = testenv.ZMember

// keyState is everything about one key a test asserts: type and full contents.
type keyState struct {
	Type string            `json:"type"`
	List []string          `json:"list,omitempty"`
	ZSet []zm              `json:"zset,omitempty"`
	Str  *string           `json:"string,omitempty"`
	Hash map[string]string `json:"hash,omitempty"`
	TTL  int64             `json:"ttl,omitempty"` // seconds; 0 = no expiry
}

// state maps key names (without the connection prefix) to their contents.
type state map[string]keyState

func list(items ...string) keyState { return keyState{Type: "list", List: items} }

// zset takes member, score, member, score, …
func zset(pairs ...any) keyState {
	ks := keyState{Type: "zset"}
	for i := 0; i < len(pairs); i += 2 {
		ks.ZSet = append(ks.ZSet, zm{Member: pairs[i].(string), Score: toFloat(pairs[i+1])})
	}
	// Redis orders by score, then member bytes.
	sort.SliceStable(ks.ZSet, func(a, b int) bool {
		if ks.ZSet[a].Score != ks.ZSet[b].Score {
			return ks.ZSet[a].Score < ks.ZSet[b].Score
		}
		return ks.ZSet[a].Member < ks.ZSet[b].Member
	})
	return ks
}

func str(v string) keyState { return keyState{Type: "string", Str: &v} }

func ones(n int) keyState {
	l := make([]string, n)
	for i := range l {
		l[i] = "1"
	}
	return list(l...)
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case float64:
		return v
	}
	panic(fmt.Sprintf("score %T", v))
}

// withQueue replaces %Q in every key with the queue's key segment.
func (s state) withQueue(seg string) state {
	out := state{}
	for k, v := range s {
		out[strings.ReplaceAll(k, "%Q", seg)] = v
	}
	return out
}

// dumpState reads every key matching prefix+match and returns it without the prefix.
func dumpState(t testing.TB, c redis.UniversalClient, prefix, match string) state {
	t.Helper()
	ctx := context.Background()
	keys, err := testenv.Keys(ctx, c, escapeGlob(prefix)+match)
	if err != nil {
		t.Fatalf("scan: %v", err)
	}
	out := state{}
	for _, k := range keys {
		typ, err := c.Type(ctx, k).Result()
		if err != nil {
			t.Fatalf("type %s: %v", k, err)
		}
		ks := keyState{Type: typ}
		switch typ {
		case "list":
			ks.List, err = c.LRange(ctx, k, 0, -1).Result()
		case "zset":
			var zs []redis.Z
			zs, err = c.ZRangeWithScores(ctx, k, 0, -1).Result()
			for _, z := range zs {
				ks.ZSet = append(ks.ZSet, zm{Member: z.Member.(string), Score: z.Score})
			}
		case "string":
			var v string
			v, err = c.Get(ctx, k).Result()
			ks.Str = &v
		case "hash":
			ks.Hash, err = c.HGetAll(ctx, k).Result()
		default:
			t.Fatalf("key %s has unexpected type %s", k, typ)
		}
		if err != nil {
			t.Fatalf("read %s: %v", k, err)
		}
		ttl, err := c.TTL(ctx, k).Result()
		if err != nil {
			t.Fatalf("ttl %s: %v", k, err)
		}
		if ttl > 0 {
			ks.TTL = int64(ttl.Seconds())
		}
		out[strings.TrimPrefix(k, prefix)] = ks
	}
	return out
}

// seedState writes s under prefix.
func seedState(t testing.TB, c redis.UniversalClient, prefix string, s state) {
	t.Helper()
	ctx := context.Background()
	for k, v := range s {
		key := prefix + k
		var err error
		switch v.Type {
		case "list":
			args := make([]any, len(v.List))
			for i, x := range v.List {
				args[i] = x
			}
			err = c.RPush(ctx, key, args...).Err()
		case "zset":
			zs := make([]redis.Z, len(v.ZSet))
			for i, m := range v.ZSet {
				zs[i] = redis.Z{Score: m.Score, Member: m.Member}
			}
			err = c.ZAdd(ctx, key, zs...).Err()
		case "string":
			err = c.Set(ctx, key, *v.Str, 0).Err()
		case "hash":
			err = c.HSet(ctx, key, v.Hash).Err()
		default:
			t.Fatalf("seed %s: type %q", k, v.Type)
		}
		if err != nil {
			t.Fatalf("seed %s: %v", key, err)
		}
		if v.TTL > 0 {
			if err := c.Expire(ctx, key, secs(v.TTL)).Err(); err != nil {
				t.Fatalf("seed ttl %s: %v", key, err)
			}
		}
	}
}

// sameState compares two states; TTLs may differ by up to ttlSlack seconds.
func sameState(got, want state, ttlSlack int64) bool {
	if len(got) != len(want) {
		return false
	}
	for k, g := range got {
		w, ok := want[k]
		if !ok {
			return false
		}
		gt, wt := g.TTL, w.TTL
		g.TTL, w.TTL = 0, 0
		if !reflect.DeepEqual(norm(g), norm(w)) {
			return false
		}
		if (gt == 0) != (wt == 0) || gt-wt > ttlSlack || wt-gt > ttlSlack {
			return false
		}
	}
	return true
}

func norm(k keyState) keyState {
	if len(k.List) == 0 {
		k.List = nil
	}
	if len(k.ZSet) == 0 {
		k.ZSet = nil
	}
	if len(k.Hash) == 0 {
		k.Hash = nil
	}
	return k
}

func assertState(t testing.TB, what string, got, want state) {
	t.Helper()
	if !sameState(got, want, 0) {
		t.Errorf("%s: key state differs\n got: %s\nwant: %s", what, showState(got), showState(want))
	}
}

func showState(s state) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		j, _ := json.Marshal(s[k])
		fmt.Fprintf(&b, "\n    %s = %s", k, j)
	}
	if b.Len() == 0 {
		return "(no keys)"
	}
	return b.String()
}

// variant is one way of naming a queue's keys; every table test runs under each.
type variant struct {
	name     string
	prefix   func(t testing.TB) string
	queue    func() string // the bare queue name passed to RDB
	segment  func(q string) string
	hashTags bool
}

func variants() []variant {
	plain := func(q string) string { return q }
	return []variant{
		{name: "prefix", prefix: testenv.Prefix, queue: func() string { return "default" }, segment: plain},
		{name: "hyphen-prefix", prefix: func(testing.TB) string { return "lq" + testenv.RandomName(4) + "-database-" },
			queue: func() string { return "emails:high" }, segment: plain},
		// No prefix: the queue name alone keeps parallel tests apart.
		{name: "no-prefix", prefix: func(testing.TB) string { return "" },
			queue: func() string { return "lqtest" + testenv.RandomName(6) }, segment: plain},
		{name: "cluster-tags", prefix: testenv.Prefix, queue: func() string { return "default" },
			segment: func(q string) string { return "{" + q + "}" }, hashTags: true},
		// A ≤13.4-style name that already has a tag is used as is.
		{name: "cluster-named", prefix: testenv.Prefix, queue: func() string { return "{default}" },
			segment: func(q string) string { return q }, hashTags: true},
	}
}

// env is one test's RDB with its own prefix and queue.
type env struct {
	r      *RDB
	c      *redis.Client
	prefix string
	queue  string
	seg    string
}

func newEnv(t testing.TB, v variant) *env {
	t.Helper()
	srv := testenv.RedisServer(t)
	c := srv.Client(t, 0)
	prefix := v.prefix(t)
	q := v.queue()
	r, err := New(c, Options{Prefix: prefix, ClusterHashTags: v.hashTags})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{r: r, c: c, prefix: prefix, queue: q, seg: v.segment(q)}
	t.Cleanup(func() {
		keys, _ := testenv.Keys(context.Background(), c, escapeGlob(prefix)+"queues:"+escapeGlob(e.seg)+"*")
		if len(keys) > 0 {
			c.Del(context.Background(), keys...)
		}
	})
	return e
}

// dump returns the state of the env's queue keys (prefix removed, queue segment as %Q).
func (e *env) dump(t testing.TB) state {
	t.Helper()
	s := dumpState(t, e.c, e.prefix, "queues:"+escapeGlob(e.seg)+"*")
	out := state{}
	for k, v := range s {
		out[strings.Replace(k, "queues:"+e.seg, "queues:%Q", 1)] = v
	}
	return out
}

func (e *env) seed(t testing.TB, s state) {
	t.Helper()
	seedState(t, e.c, e.prefix, s.withQueue(e.seg))
}

// opCase is one table-test row: seed, run one operation, assert the whole state after.
type opCase struct {
	name string
	seed state
	run  func(t *testing.T, ctx context.Context, e *env)
	want state
}

func runCases(t *testing.T, cases []opCase) {
	t.Helper()
	for _, v := range variants() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					e := newEnv(t, v)
					e.seed(t, tc.seed)
					tc.run(t, context.Background(), e)
					assertState(t, tc.name, e.dump(t), tc.want)
				})
			}
		})
	}
}

func secs(n int64) time.Duration { return time.Duration(n) * time.Second }
