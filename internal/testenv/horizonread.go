package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Reading back and comparing what Horizon's records hold after a PHP run and after a Go
// run of the same story: the raw keys (DumpKeys) and the dashboard's view (HorizonPHP's
// "read" op), both normalised (HorizonNormaliser) and compared (AssertSameJSON).

// ZMember is one sorted-set member.
type ZMember struct {
	Member string  `json:"member"`
	Score  float64 `json:"score"`
}

// DumpedKey is everything about one key of any type.
type DumpedKey struct {
	Type     string            `json:"type"`
	Hash     map[string]string `json:"hash,omitempty"`
	Set      []string          `json:"set,omitempty"` // sorted
	ZSet     []ZMember         `json:"zset,omitempty"`
	List     []string          `json:"list,omitempty"`
	Str      *string           `json:"string,omitempty"`
	ExpireAt int64             `json:"expireat,omitempty"` // EXPIRETIME, 0 = none
}

// DumpKeys reads every key under prefix (a literal prefix, not a pattern), keyed by its
// name without the prefix.
func DumpKeys(t testing.TB, c redis.UniversalClient, prefix string) map[string]DumpedKey {
	t.Helper()
	ctx := context.Background()
	keys, err := Keys(ctx, c, EscapeGlob(prefix))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]DumpedKey{}
	for _, key := range keys {
		typ, err := c.Type(ctx, key).Result()
		if err != nil {
			t.Fatal(err)
		}
		k := DumpedKey{Type: typ}
		switch typ {
		case "hash":
			k.Hash, err = c.HGetAll(ctx, key).Result()
		case "set":
			k.Set, err = c.SMembers(ctx, key).Result()
			sort.Strings(k.Set)
		case "zset":
			var zs []redis.Z
			zs, err = c.ZRangeWithScores(ctx, key, 0, -1).Result()
			for _, z := range zs {
				k.ZSet = append(k.ZSet, ZMember{Member: z.Member.(string), Score: z.Score})
			}
		case "list":
			k.List, err = c.LRange(ctx, key, 0, -1).Result()
		case "string":
			var v string
			v, err = c.Get(ctx, key).Result()
			k.Str = &v
		}
		if err != nil {
			t.Fatalf("read %s: %v", key, err)
		}
		at, err := c.ExpireTime(ctx, key).Result()
		if err != nil {
			t.Fatalf("expiretime %s: %v", key, err)
		}
		if at > 0 {
			k.ExpireAt = int64(at / time.Second)
		}
		out[strings.TrimPrefix(key, prefix)] = k
	}
	return out
}

// EscapeGlob escapes the glob characters of s for SCAN MATCH.
func EscapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// HorizonNormaliser makes the read-back of two runs comparable: job ids become their
// tokens (J1, J2, … in dispatch order), the prefixes become {H} (Horizon) and {Q}
// (queue), timestamps within a quarter of an hour of now become T (or -T for scores),
// runtimes R, and absolute expiries the number of whole minutes they lie ahead.
// Everything else is kept as is, so any other difference between the runs fails the
// comparison.
type HorizonNormaliser struct {
	repl   *strings.Replacer
	lo, hi float64
	now    float64
	// Keep, when set, is called for each string value with its key; a non-empty result
	// replaces the value (e.g. an exception text that names a runtime's own frames).
	Keep func(key, value string) string
}

var (
	pushedAtRE  = regexp.MustCompile(`"pushedAt":"[0-9.]+"`)
	retriedAtRE = regexp.MustCompile(`"retried_at":[0-9]+`)
	timeRE      = regexp.MustCompile(`^-?[0-9]{10}(\.[0-9]{1,4})?$`)
)

// NewHorizonNormaliser returns the normaliser of a run whose jobs have ids (token "J<n>"
// is ids[n-1]), whose other names become their tokens by extra (id → token), with
// Horizon prefix hzPrefix and queue connection prefix queuePrefix.
func NewHorizonNormaliser(ids []string, extra map[string]string, hzPrefix, queuePrefix string) *HorizonNormaliser {
	var pairs []string
	for i, id := range ids {
		pairs = append(pairs, id, "J"+strconv.Itoa(i+1))
	}
	for id, token := range extra {
		pairs = append(pairs, id, token)
	}
	pairs = append(pairs, hzPrefix, "{H}")
	if queuePrefix != "" {
		pairs = append(pairs, queuePrefix, "{Q}")
	}
	now := float64(time.Now().Unix())
	return &HorizonNormaliser{repl: strings.NewReplacer(pairs...), lo: now - 900, hi: now + 900, now: now}
}

func (n *HorizonNormaliser) isTime(f float64) bool {
	return math.Abs(f) >= n.lo && math.Abs(f) <= n.hi
}

func (n *HorizonNormaliser) timeToken(f float64) string {
	if f < 0 {
		return "-T"
	}
	return "T"
}

func (n *HorizonNormaliser) str(s string) string {
	s = n.repl.Replace(s)
	s = pushedAtRE.ReplaceAllString(s, `"pushedAt":"T"`)
	s = retriedAtRE.ReplaceAllString(s, `"retried_at":T`)
	if timeRE.MatchString(s) {
		if f, err := strconv.ParseFloat(s, 64); err == nil && n.isTime(f) {
			return n.timeToken(f)
		}
	}
	return s
}

// JSON normalises any value that encodes as JSON: it is encoded, decoded with numbers
// kept as json.Number, and passed through Value.
func (n *HorizonNormaliser) JSON(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return n.Value("", out)
}

// Value normalises a decoded JSON value (numbers as json.Number) found under key.
func (n *HorizonNormaliser) Value(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			nk := n.str(k)
			out[nk] = n.Value(nk, x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = n.Value(key, x)
		}
		if key == "retried_by" {
			// The dashboard sorts by retried_at, whole seconds: retries within one
			// second tie, and the sort does not keep their order. The raw keys keep it.
			sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
		}
		return out
	case json.Number:
		f, err := v.Float64()
		switch {
		case err != nil:
			return v
		case key == "runtime":
			return "R"
		case key == "expireat":
			return fmt.Sprintf("in %dm", int(math.Round((f-n.now)/60)))
		case n.isTime(f):
			return n.timeToken(f)
		}
		return v
	case string:
		if n.Keep != nil {
			if s := n.Keep(key, v); s != "" {
				return s
			}
		}
		if key == "runtime" {
			if _, err := strconv.ParseFloat(v, 64); err == nil {
				return "R"
			}
		}
		return n.str(v)
	}
	return v
}

// AssertSameJSON compares two normalised values and reports the paths that differ.
func AssertSameJSON(t testing.TB, what string, got, want any) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	var diffs []string
	diffJSON("", got, want, &diffs)
	if len(diffs) > 25 {
		diffs = append(diffs[:25], fmt.Sprintf("… and %d more", len(diffs)-25))
	}
	t.Errorf("%s: the Go run's records differ from the PHP run's:\n  %s", what, strings.Join(diffs, "\n  "))
}

func diffJSON(path string, got, want any, out *[]string) {
	gm, gok := got.(map[string]any)
	wm, wok := want.(map[string]any)
	if gok && wok {
		keys := map[string]bool{}
		for k := range gm {
			keys[k] = true
		}
		for k := range wm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			diffJSON(path+"/"+k, gm[k], wm[k], out)
		}
		return
	}
	gl, gok := got.([]any)
	wl, wok := want.([]any)
	if gok && wok && len(gl) == len(wl) {
		for i := range gl {
			diffJSON(fmt.Sprintf("%s[%d]", path, i), gl[i], wl[i], out)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		*out = append(*out, fmt.Sprintf("%s\n      go:  %.600s\n      php: %.600s", path, g, w))
	}
}
