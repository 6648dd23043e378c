package database

import (
	"strconv"

	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/payload"
)

// failed_job_ids is a JSON list of job uuids, which DatabaseBatchRepository reads as
// (array) json_decode($ids, true) and writes back with json_encode(array_values(...)).

// decodeIDs is (array) json_decode($ids, true): an array's values in order (keys are
// dropped by array_values later), [] for null or invalid JSON, [x] for a scalar x.
func decodeIDs(s string) []payload.Value {
	v, err := payload.DecodeValue([]byte(s))
	switch {
	case err != nil, v.Kind == payload.KindNull:
		return nil
	case v.Kind == payload.KindArray:
		out := make([]payload.Value, len(v.Items))
		for i, it := range v.Items {
			out[i] = it.Value
		}
		return out
	}
	return []payload.Value{v}
}

// jobIDs are the string forms of failed_job_ids, for bus.Batch.
func jobIDs(s string) []string {
	var out []string
	for _, v := range decodeIDs(s) {
		out = append(out, phpString(v))
	}
	return out
}

// phpString is (string) $v, as array_diff and array_unique compare values.
func phpString(v payload.Value) string {
	switch v.Kind {
	case payload.KindString:
		return v.Str
	case payload.KindInt:
		return strconv.FormatInt(v.Int, 10)
	case payload.KindFloat:
		return php.FloatString(v.Float)
	case payload.KindBool:
		if v.Bool {
			return "1"
		}
		return ""
	case payload.KindArray:
		return "Array"
	}
	return ""
}

// arrayDiff is array_values(array_diff($ids, [$id])).
func arrayDiff(ids []payload.Value, id string) []payload.Value {
	out := ids[:0:0]
	for _, v := range ids {
		if phpString(v) != id {
			out = append(out, v)
		}
	}
	return out
}

// arrayUnique is array_values(array_unique($ids)): the first of equal string forms.
func arrayUnique(ids []payload.Value) []payload.Value {
	seen := map[string]bool{}
	out := ids[:0:0]
	for _, v := range ids {
		if k := phpString(v); !seen[k] {
			seen[k] = true
			out = append(out, v)
		}
	}
	return out
}

// listItems makes a PHP list of values (keys "0".."n-1"), which json_encode writes as a
// JSON array ([] when empty).
func listItems(vals []payload.Value) []payload.Item {
	items := make([]payload.Item, len(vals))
	for i, v := range vals {
		items[i] = payload.Item{Key: strconv.Itoa(i), Value: v}
	}
	return items
}
