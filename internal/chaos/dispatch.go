package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/redis/go-redis/v9"
)

// ChaosClass is the PHP class of the suite's jobs (testdata/php/jobs_chaos.php).
const ChaosClass = `App\Jobs\ChaosJob`

// How a job reached Redis.
const (
	ViaPHP   = "php"   // Laravel 8.83's Bus dispatcher (dispatch_chaos.php)
	ViaLaraq = "laraq" // `laraq dispatch`
	ViaRaw   = "raw"   // a raw push (pushRaw's effect) of a hostile payload
)

// Job is one job a scenario dispatched.
type Job struct {
	Key     string
	Queue   string
	Actions []string // ChaosJob's actions (nil for hostile payloads)
	Via     string
	Hostile string // the hostile kind (see HostileKinds); "" for a ChaosJob
	// Unconfirmed says no replica was seen to hold the job's push (WAIT did not count
	// one, or the push itself erred during a failover): when it is nowhere at the end,
	// Redis lost it, not laraq (Result.LostByRedis), even if it ran on the old master.
	Unconfirmed bool
}

// Keys makes n job keys for a scenario tag (6 hex digits) and a kind: tag-kind-i.
func Keys(tag, kind string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("cx%s-%s-%d", tag, kind, i)
	}
	return out
}

// DispatchPHP dispatches ChaosJobs through Laravel's own Bus dispatcher in one
// dispatch_chaos.php process (script is its path, env its environment).
func DispatchPHP(ctx context.Context, script string, env []string, jobs []Job) error {
	if len(jobs) == 0 {
		return nil
	}
	var in bytes.Buffer
	for _, j := range jobs {
		line, err := json.Marshal(map[string]any{"key": j.Key, "actions": j.Actions, "queue": j.Queue})
		if err != nil {
			return err
		}
		in.Write(append(line, '\n'))
	}
	cmd := exec.CommandContext(ctx, "php", script)
	cmd.Env = env
	cmd.Stdin = &in
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	n := 0
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var res struct {
			Key, ID, Error string
		}
		if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
			return fmt.Errorf("chaos: dispatch_chaos.php printed %q: %w", sc.Text(), err)
		}
		if res.Error != "" {
			return fmt.Errorf("chaos: dispatch_chaos.php: job %s: %s", res.Key, res.Error)
		}
		n++
	}
	if runErr != nil || n != len(jobs) {
		return fmt.Errorf("chaos: dispatch_chaos.php dispatched %d of %d jobs: %v\n%s", n, len(jobs), runErr, errb.String())
	}
	return nil
}

// DispatchLaraq dispatches one ChaosJob with `laraq dispatch` (bin), as a shell user
// would.
func DispatchLaraq(ctx context.Context, bin, redisURL, prefix string, j Job) error {
	props, err := json.Marshal(map[string]any{"key": j.Key, "actions": j.Actions})
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, "dispatch", "--redis", redisURL, "--prefix", prefix,
		"--queue", j.Queue, "--props", "-", ChaosClass)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // no LARAQ_* or REDIS_* of the machine
	cmd.Stdin = bytes.NewReader(props)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("chaos: laraq dispatch %s: %v: %s", j.Key, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// PushRaw pushes payloads to a queue as Laravel's pushRaw does (RPUSH and a notify
// token, in one script), in batches.
func PushRaw(ctx context.Context, client redis.UniversalClient, prefix, queue string, payloads [][]byte) error {
	r, err := rdb.New(client, rdb.Options{Prefix: prefix})
	if err != nil {
		return err
	}
	for len(payloads) > 0 {
		n := min(len(payloads), 200)
		if err := r.PushBulk(ctx, queue, payloads[:n]); err != nil {
			return fmt.Errorf("chaos: raw push: %w", err)
		}
		payloads = payloads[n:]
	}
	return nil
}
