package rdb

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed horizon_batch.lua
var hzBatchLoop string

// hzBatched are the scripts a batch can call, numbered from 1 in horizon_batch.lua.
var hzBatched = []*redis.Script{hzPushedScript, hzUpdateScript, hzCompletedScript, hzFailedScript,
	hzRetryStatusScript, hzMetricsScript}

// hzBatchScript is horizon_batch.lua preceded by horizon_completed's function
// hz_completed and the body of each batched script as a function of its own KEYS and
// ARGV (Lua's local parameters shadow the globals).
var hzBatchScript = redis.NewScript(func() string {
	lib, entry, ok := strings.Cut(hzCompletedSrc, hzCompletedEntry)
	if !ok {
		panic("rdb: horizon_completed.lua has no " + hzCompletedEntry)
	}
	src := lib + "local hz_scripts = {}\n"
	for i, body := range []string{hzPushedSrc, hzUpdateSrc, entry, hzFailedSrc, hzRetryStatusSrc, hzMetricsSrc} {
		src += fmt.Sprintf("hz_scripts[%d] = function(KEYS, ARGV)\n%s\nend\n", i+1, body)
	}
	return src + hzBatchLoop
}())

// hzCompletedEntry ends horizon_completed's function: what follows calls it with the
// script's KEYS and ARGV.
const hzCompletedEntry = "-- entry\n"

// hzCompletedGroup is the number of a group of horizon_completed calls in a batch (see
// horizon_batch.lua), and hzCompletedShared the positions of the arguments the calls of
// a group share (ARGV 2-4 and 8-11; their keys but the first are shared too).
const hzCompletedGroup = 7

var hzCompletedShared = []int{1, 2, 3, 7, 8, 9, 10}

// hzMetricsNumber is horizon_metrics' number in a batch.
var hzMetricsNumber = slices.Index(hzBatched, hzMetricsScript) + 1

func init() { hzScripts = append(hzScripts, hzBatchScript) }

// HorizonBatch collects calls of Horizon's scripts and sends them as one script call,
// with the effect of the separate calls in order: a worker that records many jobs at
// once pays one script call per batch instead of four per job, which on the server
// costs far more than the writes themselves. Consecutive completions of the same queue,
// job class and second go as one group, their shared keys and arguments sent once (on
// a 2-core host this cut the server's script time per completion by a fifth). Pass it
// where the Horizon methods take a redis.Scripter, then Queue it on a pipeline. Not safe
// for concurrent use.
type HorizonBatch struct {
	header []any // per call: script number, key count, argument count
	keys   []string
	args   []any
	err    error

	// grouped: the last call in header is a group of completions (hzCompletedGroup),
	// whose shared keys start at keys[groupKeys]; groupArgs are its shared arguments.
	grouped   bool
	groupKeys int
	groupArgs []any

	// The metrics calls, one per metrics hash with every runtime in order
	// (horizon_metrics.lua applies them one after the other), sent after the other
	// calls: they touch only the metrics keys, so the order among the others does not
	// change an effect, and one call per hash instead of one per job spares the server
	// most of the cost of the bookkeeping.
	metrics   []*hzMetricsCall
	metricsOf map[string]*hzMetricsCall
}

type hzMetricsCall struct {
	keys []string
	ms   []any
}

// Len is the number of script calls collected (a group of completions is one).
func (b *HorizonBatch) Len() int { return len(b.header)/3 + len(b.metrics) }

var errNotBatched = errors.New("rdb: only Horizon's scripts can be batched")

// EvalSha collects one call of a batched script (Script.EvalSha calls it); the returned
// command has no result: the batch has one.
func (b *HorizonBatch) EvalSha(ctx context.Context, sha string, keys []string, args ...any) *redis.Cmd {
	if sha == hzMetricsScript.Hash() && len(keys) == 2 {
		m := b.metricsOf[keys[0]]
		if m == nil {
			if b.metricsOf == nil {
				b.metricsOf = map[string]*hzMetricsCall{}
			}
			m = &hzMetricsCall{keys: keys}
			b.metricsOf[keys[0]] = m
			b.metrics = append(b.metrics, m)
		}
		m.ms = append(m.ms, args...)
		return batchedCmd
	}
	if sha == hzCompletedScript.Hash() && len(keys) == 6 && len(args) >= 11 {
		b.addCompleted(keys, args)
		return batchedCmd
	}
	for i, s := range hzBatched {
		if s.Hash() == sha {
			b.grouped = false
			b.header = append(b.header, i+1, len(keys), len(args))
			b.keys = append(b.keys, keys...)
			b.args = append(b.args, args...)
			return batchedCmd
		}
	}
	return b.notBatched(ctx)
}

// addCompleted adds one horizon_completed call to the group of completions that ends
// the batch when it shares the group's keys and arguments, else as a new group: the
// calls of a group send their shared keys and arguments once, and the server runs
// horizon_completed's function for each job without building its KEYS and ARGV.
func (b *HorizonBatch) addCompleted(keys []string, args []any) {
	if !b.grouped || !b.sameGroup(keys, args) {
		b.grouped, b.groupKeys = true, len(b.keys)
		b.groupArgs = make([]any, 0, len(hzCompletedShared))
		for _, i := range hzCompletedShared {
			b.groupArgs = append(b.groupArgs, args[i])
		}
		b.header = append(b.header, hzCompletedGroup, 5, len(hzCompletedShared))
		b.keys = append(b.keys, keys[1:]...)
		b.args = append(b.args, b.groupArgs...)
	}
	tags := args[11:]
	b.keys = append(b.keys, keys[0])
	b.args = append(b.args, args[0], args[4], args[5], args[6], len(tags))
	b.args = append(b.args, tags...)
	n := len(b.header)
	b.header[n-2] = b.header[n-2].(int) + 1
	b.header[n-1] = b.header[n-1].(int) + 5 + len(tags)
}

// sameGroup reports whether a completion shares the open group's keys and arguments
// (equal strings and integers; anything else starts a group of its own).
func (b *HorizonBatch) sameGroup(keys []string, args []any) bool {
	if !slices.Equal(b.keys[b.groupKeys:b.groupKeys+5], keys[1:]) {
		return false
	}
	for j, i := range hzCompletedShared {
		if !sameArg(b.groupArgs[j], args[i]) {
			return false
		}
	}
	return true
}

func sameArg(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64:
		y, ok := b.(int64)
		return ok && x == y
	}
	return false
}

// batchedCmd is what EvalSha returns for every collected call: a command with no
// result of its own, never written to (the batch's command has the result).
var batchedCmd = redis.NewCmd(context.Background())

func (b *HorizonBatch) notBatched(ctx context.Context) *redis.Cmd {
	cmd := redis.NewCmd(ctx)
	cmd.SetErr(errNotBatched)
	b.err = errNotBatched
	return cmd
}

// Eval is not batched: Horizon's methods call EvalSha.
func (b *HorizonBatch) Eval(ctx context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	return b.notBatched(ctx)
}

// EvalRO is not batched.
func (b *HorizonBatch) EvalRO(ctx context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	return b.notBatched(ctx)
}

// EvalShaRO is not batched.
func (b *HorizonBatch) EvalShaRO(ctx context.Context, _ string, _ []string, _ ...any) *redis.Cmd {
	return b.notBatched(ctx)
}

// ScriptExists is not batched.
func (b *HorizonBatch) ScriptExists(ctx context.Context, _ ...string) *redis.BoolSliceCmd {
	cmd := redis.NewBoolSliceCmd(ctx)
	cmd.SetErr(errNotBatched)
	return cmd
}

// ScriptLoad is not batched.
func (b *HorizonBatch) ScriptLoad(ctx context.Context, _ string) *redis.StringCmd {
	cmd := redis.NewStringCmd(ctx)
	cmd.SetErr(errNotBatched)
	return cmd
}

// Queue queues the collected calls on c as one EVALSHA of the batch script and empties
// the batch; nothing when it is empty. Read the command's reply with
// HorizonBatchErrors. A batch that collected a call it cannot send queues nothing and
// returns that error.
func (b *HorizonBatch) Queue(ctx context.Context, c redis.Scripter) (*redis.Cmd, error) {
	if b.err != nil {
		err := b.err
		*b = HorizonBatch{}
		return nil, err
	}
	if b.Len() == 0 {
		return nil, nil
	}
	for _, m := range b.metrics {
		b.header = append(b.header, hzMetricsNumber, len(m.keys), len(m.ms))
		b.keys = append(b.keys, m.keys...)
		b.args = append(b.args, m.ms...)
	}
	b.metrics, b.metricsOf = nil, nil
	args := make([]any, 0, 1+len(b.header)+len(b.args))
	args = append(args, b.Len())
	args = append(args, b.header...)
	args = append(args, b.args...)
	cmd := hzBatchScript.EvalSha(ctx, c, b.keys, args...)
	*b = HorizonBatch{}
	return cmd, nil
}

// HorizonBatchErrors reads the reply of a batch: the errors of its calls that failed,
// or the error of the batch itself; nil for a command that is not a batch.
func HorizonBatchErrors(cmd redis.Cmder) error {
	c, ok := cmd.(*redis.Cmd)
	if !ok || c == nil {
		return nil
	}
	if args := c.Args(); len(args) < 2 || args[0] != "evalsha" || args[1] != hzBatchScript.Hash() {
		return nil
	}
	v, err := c.Result()
	if err != nil {
		return err
	}
	list, _ := v.([]any)
	if len(list) == 0 {
		return nil
	}
	return fmt.Errorf("rdb: horizon records: %v (and %d more)", list[0], len(list)-1)
}
