package rdb_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
)

// replicated is a master and a replica of it on loopback, the replica's link up.
func replicated(t *testing.T) (master, replica *testenv.Redis, mc, rc *redis.Client) {
	t.Helper()
	master = testenv.PrivateRedis(t)
	replica = testenv.PrivateRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	mc, rc = master.Client(t, 0), replica.Client(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		info, _ := rc.Info(ctx, "replication").Result()
		if strings.Contains(info, "master_link_status:up") {
			return master, replica, mc, rc
		}
		if ctx.Err() != nil {
			t.Fatalf("the replica's link did not come up: %s", info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// popOne pushes a job to queue and pops it.
func popOne(t *testing.T, ctx context.Context, r *rdb.RDB, queue, payload string) rdb.PoppedJob {
	t.Helper()
	if err := r.Push(ctx, queue, []byte(payload)); err != nil {
		t.Fatal(err)
	}
	jobs, err := r.PopMany(ctx, queue, time.Now().Unix()+60, 1)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("pop: %v, %d jobs", err, len(jobs))
	}
	return jobs[0]
}

// TestReplicaAcksWaitForTheReplica: with ReplicaAcks, a deletion and a release return
// once the replica holds them: at once while it answers, when it answers again after a
// stop shorter than the timeout. A replica stopped longer makes the acknowledgements
// unconfirmed (reported once); they stop waiting until a probe finds it back.
func TestReplicaAcksWaitForTheReplica(t *testing.T) {
	ctx := context.Background()
	_, replica, mc, rc := replicated(t)
	changes := make(chan error, 10)
	r, err := rdb.New(mc, rdb.Options{Prefix: "p_", ReplicaAcks: rdb.ReplicaAcks{Replicas: 1, Timeout: 2 * time.Second,
		OnConfirming: func(confirming bool, err error) {
			if confirming {
				err = nil
			} else if err == nil {
				err = errors.New("unconfirmed without an error")
			}
			changes <- err
		}}})
	if err != nil {
		t.Fatal(err)
	}
	reserved, delayed := "p_queues:default:reserved", "p_queues:default:delayed"

	job := popOne(t, ctx, r, "default", `{"uuid":"a","attempts":0}`)
	deleted, err := r.DeleteReserved(ctx, "default", job.Reserved)
	if err != nil || !deleted {
		t.Fatalf("delete with the replica up: %v, %v", deleted, err)
	}
	// Confirmed: the replica holds the deletion now, without waiting.
	if n := rc.ZCard(ctx, reserved).Val(); n != 0 {
		t.Fatalf("the replica still holds %d reserved jobs after a confirmed deletion", n)
	}

	// Stopped for less than the timeout: the deletion and the release wait for it.
	for _, release := range []bool{false, true} {
		job = popOne(t, ctx, r, "default", `{"uuid":"b","attempts":0}`)
		replica.Stall(t, 700*time.Millisecond)
		started := time.Now()
		var done bool
		if release {
			done, err = r.Release(ctx, "default", job.Reserved, time.Now().Unix()+30)
		} else {
			done, err = r.DeleteReserved(ctx, "default", job.Reserved)
		}
		if err != nil || !done {
			t.Fatalf("release %v with the replica stopped for 700ms: %v, %v", release, done, err)
		}
		if d := time.Since(started); d < 500*time.Millisecond {
			t.Fatalf("release %v returned after %s, before the replica was back", release, d)
		}
		if n := rc.ZCard(ctx, reserved).Val(); n != 0 {
			t.Fatalf("release %v: returned before the replica held it: %d reserved there", release, n)
		}
	}
	if n := rc.ZCard(ctx, delayed).Val(); n != 1 {
		t.Fatalf("the replica holds %d delayed jobs after the confirmed release, want 1", n)
	}
	select {
	case err := <-changes:
		t.Fatalf("OnConfirming called for stops shorter than the timeout: %v", err)
	default:
	}

	// Stopped for longer: the first acknowledgement waits the timeout and reports it;
	// the next ones do not wait.
	job = popOne(t, ctx, r, "default", `{"uuid":"c","attempts":0}`)
	replica.Stall(t, 5*time.Second)
	started := time.Now()
	if deleted, err := r.DeleteReserved(ctx, "default", job.Reserved); err != nil || !deleted {
		t.Fatalf("delete with the replica stopped: %v, %v", deleted, err)
	}
	if d := time.Since(started); d < 1900*time.Millisecond || d > 4*time.Second {
		t.Fatalf("the unconfirmed deletion returned after %s, want about the 2s timeout", d)
	}
	var nr *rdb.NotReplicatedError
	if err := <-changes; !errors.As(err, &nr) || nr.Want != 1 || nr.Got != 0 {
		t.Fatalf("OnConfirming(false, %v); want a NotReplicatedError of 0 of 1", err)
	}
	started = time.Now()
	for i := range 5 {
		job = popOne(t, ctx, r, "default", `{"uuid":"d`+strconv.Itoa(i)+`","attempts":0}`)
		if deleted, err := r.DeleteReserved(ctx, "default", job.Reserved); err != nil || !deleted {
			t.Fatalf("delete while unconfirmed: %v, %v", deleted, err)
		}
	}
	if d := time.Since(started); d > time.Second {
		t.Fatalf("5 unconfirmed deletions took %s: they should not wait", d)
	}
	// Back: a probe finds it, and acknowledgements are confirmed again.
	waitFor(t, 10*time.Second, func() bool {
		job = popOne(t, ctx, r, "default", `{"uuid":"e","attempts":0}`)
		if _, err := r.DeleteReserved(ctx, "default", job.Reserved); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-changes:
			if err != nil {
				t.Fatalf("OnConfirming(false) again: %v", err)
			}
			return true
		default:
			return false
		}
	})
	if n := rc.ZCard(ctx, reserved).Val(); n != 0 {
		t.Fatalf("confirmed again, yet the replica holds %d reserved jobs", n)
	}
}

// TestReplicaAcksOnAReplica: a master that became a replica refuses the deletion with
// an error, and the next one, once it is a master again, runs on a fresh connection.
func TestReplicaAcksOnAReplica(t *testing.T) {
	ctx := context.Background()
	_, _, mc, _ := replicated(t)
	r, err := rdb.New(mc, rdb.Options{ReplicaAcks: rdb.ReplicaAcks{Replicas: 1, Timeout: 200 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	job := popOne(t, ctx, r, "default", `{"uuid":"a","attempts":0}`)
	other := testenv.PrivateRedis(t)
	if err := mc.Do(ctx, "replicaof", "127.0.0.1", other.Port).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.DeleteReserved(ctx, "default", job.Reserved); err == nil {
		t.Fatalf("a deletion sent to a replica: %v; want its refusal", err)
	}
	if err := mc.Do(ctx, "replicaof", "no", "one").Err(); err != nil {
		t.Fatal(err)
	}
	// The old replica reconnects to its master again.
	waitFor(t, 20*time.Second, func() bool {
		job = popOne(t, ctx, r, "default", `{"uuid":"b","attempts":0}`)
		deleted, err := r.DeleteReserved(ctx, "default", job.Reserved)
		return err == nil && deleted
	})
}

// TestReplicaAcksNeedOneServer: a Cluster client cannot WAIT on one connection.
func TestReplicaAcksNeedOneServer(t *testing.T) {
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	defer c.Close()
	_, err := rdb.New(c, rdb.Options{ReplicaAcks: rdb.ReplicaAcks{Replicas: 1}})
	if err == nil || !strings.Contains(err.Error(), "Cluster") && !strings.Contains(err.Error(), "one Redis server") {
		t.Fatalf("ReplicaAcks on a Cluster client: %v", err)
	}
	if _, err := rdb.New(redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}), rdb.Options{ReplicaAcks: rdb.ReplicaAcks{Replicas: 1, Timeout: time.Microsecond}}); err == nil {
		t.Fatal("a timeout under a millisecond was taken (WAIT counts milliseconds; 0 would wait forever)")
	}
}

func waitFor(t *testing.T, d time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
