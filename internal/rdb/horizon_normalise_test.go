package rdb

import (
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
)

// normaliser makes the read-back of two runs comparable: job ids become their tokens
// (J1, J2, … in dispatch order), the prefixes become {H} (Horizon) and {Q} (queue),
// timestamps within a few minutes of now become T (or -T for scores), runtimes R, and
// absolute expiries the number of whole minutes they lie ahead. Everything else is kept
// as is, so any other difference between the runs fails the comparison.
type normaliser struct {
	repl   *strings.Replacer
	lo, hi float64
	now    float64
}

var (
	pushedAtRE  = regexp.MustCompile(`"pushedAt":"[0-9.]+"`)
	retriedAtRE = regexp.MustCompile(`"retried_at":[0-9]+`)
	timeRE      = regexp.MustCompile(`^-?[0-9]{10}(\.[0-9]{1,4})?$`)
)

func (run *storyRun) normaliser() *normaliser {
	var pairs []string
	for i, id := range run.ids {
		pairs = append(pairs, id, "J"+strconv.Itoa(i+1))
	}
	for id, token := range run.driverID {
		pairs = append(pairs, id, token)
	}
	pairs = append(pairs, run.php.HorizonPrefix, "{H}", run.php.Prefix, "{Q}")
	now := float64(time.Now().Unix())
	return &normaliser{repl: strings.NewReplacer(pairs...), lo: now - 900, hi: now + 900, now: now}
}

func (n *normaliser) isTime(f float64) bool {
	return math.Abs(f) >= n.lo && math.Abs(f) <= n.hi
}

func (n *normaliser) timeToken(f float64) string {
	if f < 0 {
		return "-T"
	}
	return "T"
}

func (n *normaliser) str(s string) string {
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

func (n *normaliser) value(key string, v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			nk := n.str(k)
			out[nk] = n.value(nk, x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = n.value(key, x)
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
		if key == "runtime" {
			if _, err := strconv.ParseFloat(v, 64); err == nil {
				return "R"
			}
		}
		return n.str(v)
	}
	return v
}

// assertSameJSON compares two normalised values and reports the paths that differ.
func assertSameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	var diffs []string
	diffJSON("", got, want, &diffs)
	if len(diffs) > 25 {
		diffs = append(diffs[:25], fmt.Sprintf("… and %d more", len(diffs)-25))
	}
	t.Errorf("%s: the Go worker's records differ from the PHP worker's:\n  %s", what, strings.Join(diffs, "\n  "))
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
