package laraq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/laraq/laraq/failed"
)

// Payloads the pop script cannot reserve (not JSON, not an object, attempts missing or
// not a number) are lost by Laravel's script; laraq's moves them to the queue's invalid
// list (queues:NAME:invalid) instead. These are what an operator does with them.

// Invalid returns the payloads laraq set aside in a queue's invalid list (payloads the pop
// script cannot reserve, which a PHP worker would lose), oldest first.
func (a *Admin) Invalid(ctx context.Context, queue string) ([][]byte, error) {
	return a.rdb.Invalid(ctx, queue)
}

// ClearInvalid deletes a queue's invalid list and returns how many payloads it held.
func (a *Admin) ClearInvalid(ctx context.Context, queue string) (int64, error) {
	return a.rdb.ClearInvalid(ctx, queue)
}

// RequeueInvalid moves a queue's set-aside payloads back to its ready list, in order,
// and returns how many moved: for payloads repaired meanwhile, or set aside by a bug
// since fixed. One the pop script still cannot reserve is set aside again.
func (a *Admin) RequeueInvalid(ctx context.Context, queue string) (int64, error) {
	return a.rdb.RequeueInvalid(ctx, queue)
}

// FailInvalid records each of a queue's set-aside payloads in the connection's failed-job
// store, where `php artisan queue:failed` and `laraq failed` list them, and removes it
// from the invalid list once its row is written. It returns how many it moved; on an
// error the payloads not yet recorded stay in the invalid list.
func (a *Admin) FailInvalid(ctx context.Context, queue string) (int, error) {
	if a.conn.Failed == nil {
		return 0, errors.New("laraq: no failed-job store on this connection")
	}
	jobs, err := a.rdb.Invalid(ctx, queue)
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, job := range jobs {
		why := WhyInvalid(job)
		if why == "" {
			why = "Redis' Lua JSON decoder rejected it"
		}
		text := failed.New(invalidPayloadClass, "The job payload cannot be reserved by the queue's pop script: "+why+".", 1).String()
		if _, err := a.conn.Failed.Log(ctx, a.connectionName(""), queue, job, text); err != nil {
			return moved, fmt.Errorf("laraq: recording a set-aside payload of queue %q: %w", queue, err)
		}
		if _, err := a.rdb.RemoveInvalid(ctx, queue, job); err != nil {
			return moved, err
		}
		moved++
	}
	return moved, nil
}

// invalidPayloadClass is the exception class a set-aside payload's failed row names.
const invalidPayloadClass = `Illuminate\Queue\InvalidPayloadException`

// WhyInvalid says why Laravel's pop script cannot reserve payload (its cjson.decode or
// attempts + 1 would fail), or "" when it can.
func WhyInvalid(payload []byte) string {
	var v any
	if err := json.Unmarshal(payload, &v); err != nil {
		return "it is not JSON"
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "it is not a JSON object"
	}
	switch a := obj["attempts"].(type) {
	case float64:
		return ""
	case string:
		// Lua's arithmetic coerces numeric strings ("2", " 2 ", "0x2").
		t := strings.TrimSpace(a)
		if _, err := strconv.ParseFloat(t, 64); err == nil {
			return ""
		}
		if _, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X"), 16, 64); err == nil && t != strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X") {
			return ""
		}
		return "its attempts is not a number"
	case nil:
		return "it has no attempts"
	}
	return "its attempts is not a number"
}
