package chaos

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/testenv"
)

// Sentinel deployment of a scenario (Options.Sentinel): the scenario's redis-server is
// the master, with one replica (append-only file on, like the master) and three
// Sentinels watching it with quorum 2. Workers reach Redis through the Sentinels
// (--redis-sentinel), and the harness through a failover client of its own.

// SentinelMaster is the master set's name in every scenario.
const SentinelMaster = "chaos-master"

// sentinelDownAfter is the Sentinels' down-after-milliseconds: a killed master is
// failed over about this long after its death, plus the election.
const sentinelDownAfter = 1000 * time.Millisecond

// Sentinels are a scenario's replica and Sentinels.
type Sentinels struct {
	Replica *Redis
	Addrs   []string
	procs   []*Proc
}

// StartSentinels starts a replica of master in dir/replica and three Sentinels in dir,
// and waits until every Sentinel knows the replica and the two other Sentinels.
func StartSentinels(dir string, master *Redis) (*Sentinels, error) {
	replicaDir := filepath.Join(dir, "replica")
	if err := os.MkdirAll(replicaDir, 0o755); err != nil {
		return nil, err
	}
	replica, err := StartRedis(replicaDir, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	if err != nil {
		return nil, err
	}
	s := &Sentinels{Replica: replica}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("chaos: redis-server not in PATH")
	}
	for i := range 3 {
		port, err := freePort()
		if err != nil {
			s.Close()
			return nil, err
		}
		conf := filepath.Join(dir, fmt.Sprintf("sentinel-%d.conf", i))
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s %d\n"+
			"sentinel failover-timeout %s 10000\nsentinel parallel-syncs %s 1\n",
			port, dir, SentinelMaster, master.Port, SentinelMaster, sentinelDownAfter.Milliseconds(), SentinelMaster, SentinelMaster)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			s.Close()
			return nil, err
		}
		p, err := StartProc(dir, fmt.Sprintf("sentinel-%d", i), exec.Command(bin, conf, "--sentinel"))
		if err != nil {
			s.Close()
			return nil, err
		}
		s.procs = append(s.procs, p)
		s.Addrs = append(s.Addrs, net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, a := range s.Addrs {
		sc := redis.NewSentinelClient(&redis.Options{Addr: a, MaxRetries: -1})
		for {
			replicas, _ := sc.Replicas(ctx, SentinelMaster).Result()
			peers, _ := sc.Sentinels(ctx, SentinelMaster).Result()
			if len(replicas) == 1 && len(peers) == 2 {
				break
			}
			if ctx.Err() != nil {
				_ = sc.Close()
				s.Close()
				return nil, fmt.Errorf("chaos: sentinel %s did not see the replica and its peers within 30s", a)
			}
			time.Sleep(100 * time.Millisecond)
		}
		_ = sc.Close()
	}
	return s, nil
}

// Args are the worker flags that reach the master through the Sentinels.
func (s *Sentinels) Args() []string {
	return []string{"--redis-sentinel", strings.Join(s.Addrs, ","), "--redis-sentinel-master", SentinelMaster}
}

// Client returns a failover client on database db (the caller closes it).
func (s *Sentinels) Client(db int) *redis.Client {
	return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: SentinelMaster, SentinelAddrs: s.Addrs, DB: db,
		PoolSize: 8, DialTimeout: time.Second, ReadTimeout: 5 * time.Second, WriteTimeout: 5 * time.Second})
}

// MasterAddr asks the Sentinels which server is the master now.
func (s *Sentinels) MasterAddr(ctx context.Context) (string, error) {
	var last error
	for _, a := range s.Addrs {
		sc := redis.NewSentinelClient(&redis.Options{Addr: a, MaxRetries: -1})
		addr, err := sc.GetMasterAddrByName(ctx, SentinelMaster).Result()
		_ = sc.Close()
		if err == nil {
			return net.JoinHostPort(addr[0], addr[1]), nil
		}
		last = err
	}
	return "", last
}

// Failover runs SENTINEL FAILOVER.
func (s *Sentinels) Failover(ctx context.Context) error {
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addrs[0], MaxRetries: -1})
	defer sc.Close()
	return sc.Failover(ctx, SentinelMaster).Err()
}

// WaitMaster waits until the Sentinels name a master other than before, and the new
// master accepts writes.
func (s *Sentinels) WaitMaster(ctx context.Context, before string) (string, error) {
	for {
		now, err := s.MasterAddr(ctx)
		if err == nil && now != before {
			c := redis.NewClient(&redis.Options{Addr: now, MaxRetries: -1})
			role, err := c.Do(ctx, "ROLE").Slice()
			_ = c.Close()
			if err == nil && len(role) > 0 && role[0] == "master" {
				return now, nil
			}
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("chaos: the master is still %s: %w", before, ctx.Err())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Close kills the Sentinels and the replica.
func (s *Sentinels) Close() {
	for _, p := range s.procs {
		p.Kill9()
	}
	if s.Replica != nil {
		s.Replica.Close()
	}
}

// StagePHP has Laravel's dispatcher write jobs' payloads under a scratch prefix of the
// master and takes them back out: the bytes a PHP application would push, for the
// scenario to push itself later (PushUnconfirmed).
func (e *Env) StagePHP(ctx context.Context, jobs []Job) ([][]byte, error) {
	stage := "stage" + e.Prefix
	pe := e.phpEnvPrefix("dispatch", "", stage)
	if err := DispatchPHP(ctx, testenv.Testdata("php", "dispatch_chaos.php"), pe, jobs); err != nil {
		return nil, err
	}
	c := e.Redis.Client(0)
	defer c.Close()
	key := stage + "queues:" + e.Queue
	raw, err := c.LRange(ctx, key, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	if err := c.Del(ctx, key, key+":notify").Err(); err != nil {
		return nil, err
	}
	if len(raw) != len(jobs) {
		return nil, fmt.Errorf("chaos: staged %d payloads for %d jobs", len(raw), len(jobs))
	}
	out := make([][]byte, len(raw))
	for i, p := range raw {
		out[i] = []byte(p)
	}
	return out, nil
}

// Remember adds jobs the scenario pushed itself to the accounting.
func (e *Env) Remember(jobs []Job) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.jobs = append(e.jobs, jobs...)
}

// PushConfirmed pushes payloads (staged by StagePHP, in the order of jobs) in batches
// through the scenario's client while a failover may happen, and after each batch asks
// Redis to WAIT for a replica: jobs of a batch no replica was counted for, or whose push
// erred, are remembered Unconfirmed. Pushes are not retried: a push whose reply was lost
// may have landed, and a second copy would be a second job.
func (e *Env) PushConfirmed(ctx context.Context, jobs []Job, payloads [][]byte, batch int, pause time.Duration) (unconfirmed int) {
	for i := 0; i < len(jobs); i += batch {
		end := min(i+batch, len(jobs))
		err := PushRaw(ctx, e.Client, e.Prefix, e.Queue, payloads[i:end])
		confirmed := false
		if err == nil {
			n, werr := e.Client.Do(ctx, "WAIT", 1, 200).Int()
			confirmed = werr == nil && n >= 1
		}
		for j := i; j < end; j++ {
			jobs[j].Unconfirmed = !confirmed
		}
		if !confirmed {
			unconfirmed += end - i
		}
		e.Remember(jobs[i:end])
		time.Sleep(pause)
	}
	return unconfirmed
}

// DuplicatesOutside lists the jobs that ran again after a successful run that ended
// outside [from, to]: a duplicate a failover explains has its first success on the
// old master in the moments before the switch, whose deletion the replica never got.
func DuplicatesOutside(in Inputs, from, to time.Time) []string {
	runs := map[string][]Run{}
	for _, r := range in.Runs {
		runs[r.Key] = append(runs[r.Key], r)
	}
	var out []string
	for key, rs := range runs {
		var ok *Run
		for i := range rs {
			if rs[i].Outcome == OutcomeOK {
				ok = &rs[i]
				break
			}
		}
		if ok == nil {
			continue
		}
		for _, r := range rs {
			if r.ID != ok.ID && !r.Start.Before(ok.Start) && (ok.End.Before(from) || ok.End.After(to)) {
				out = append(out, fmt.Sprintf("%s: first success by %s ended %s, ran again by %s at %s",
					key, ok.Worker, ok.End.Format("15:04:05.000"), r.Worker, r.Start.Format("15:04:05.000")))
				break
			}
		}
	}
	return out
}
