package worker

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/horizon"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
)

// A finished job's deletion that may ride the next pop hands its slot to the fetch
// loop, which wakes, sends it and hands it the result; one the loop does not take goes
// with the batcher after rideWait, which frees its slot once Redis answered; one that
// failed keeps its slot with its job.
func TestDeletionRidesThePop(t *testing.T) {
	ctx := context.Background()
	c := testenv.RedisServer(t).Client(t, 0)
	r, err := rdb.New(c, rdb.Options{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	a := newAcks(r, nil, &Config{Concurrency: 4})
	defer a.start(ctx)()
	a.startRiding()

	k := r.Keys("q").Reserved
	if err := c.ZAdd(ctx, k, redis.Z{Score: 1, Member: "job-1"}, redis.Z{Score: 1, Member: "job-2"}).Err(); err != nil {
		t.Fatal(err)
	}
	slots := make(chan struct{}, 1)
	req := &deleteReq{job: rdb.Finished{Queue: "q", Reserved: []byte("job-1")}, slots: slots}
	done := make(chan bool)
	go func() {
		deleted, err := a.delete(ctx, req)
		if err != nil {
			t.Error(err)
		}
		done <- deleted
	}()
	select {
	case <-a.rode:
	case <-time.After(time.Second):
		t.Fatal("the fetch loop was not woken")
	}
	riders := a.takeRiders()
	if len(riders) != 1 || riders[0] != req || !req.freed {
		t.Fatalf("riders %v (freed %v), want the request", riders, req.freed)
	}
	select {
	case <-done:
		t.Fatal("delete returned before the loop sent the deletion")
	case <-time.After(3 * rideWait):
	}
	if failed := a.sendRiding(ctx, riders, nil); failed != 0 || !<-done || !req.freed || len(slots) != 0 {
		t.Fatalf("failed %d, freed %v, %d slots given back", failed, req.freed, len(slots))
	}

	// A deletion that failed keeps its slot with its job.
	go func() { _, _ = a.delete(ctx, req) }()
	<-a.rode
	riders = a.takeRiders()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if failed := a.sendRiding(cancelled, riders, nil); failed != 1 || req.freed {
		t.Fatalf("failed %d, freed %v", failed, req.freed)
	}

	// Not taken by a pop: the batcher deletes it after rideWait, then frees the slot.
	req2 := &deleteReq{job: rdb.Finished{Queue: "q", Reserved: []byte("job-2")}, slots: make(chan struct{}, 1)}
	deleted, err := a.delete(ctx, req2)
	if err != nil || !deleted || !req2.freed || len(req2.slots) != 1 {
		t.Fatalf("left to the batcher: deleted %v, err %v, freed %v, %d slots", deleted, err, req2.freed, len(req2.slots))
	}
	if n, _ := c.ZCard(ctx, k).Result(); n != 0 {
		t.Fatalf("%d reservations left", n)
	}

	// Once the loop stopped riding, a deletion goes with the batcher at once and keeps
	// its slot until the job is finished.
	a.stopRiding(ctx)
	req3 := &deleteReq{job: rdb.Finished{Queue: "q", Reserved: []byte("job-3")}, slots: make(chan struct{}, 1)}
	if deleted, err := a.delete(ctx, req3); err != nil || deleted || req3.freed || len(req3.slots) != 0 {
		t.Fatalf("after the loop: deleted %v err %v freed %v", deleted, err, req3.freed)
	}
}

// Deletions ride only where nothing depends on the job's slot being held until it is
// deleted: not with replica acknowledgements, --rest, --max-jobs or one slot.
func TestWhenDeletionsRide(t *testing.T) {
	c := testenv.RedisServer(t).Client(t, 0)
	plain, err := rdb.New(c, rdb.Options{Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	confirmed, err := rdb.New(c, rdb.Options{Prefix: testenv.Prefix(t), ReplicaAcks: rdb.ReplicaAcks{Replicas: 1, Timeout: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		a    *acks
		want bool
	}{
		{"plain, 2 slots", newAcks(plain, nil, &Config{Concurrency: 2}), true},
		{"one slot", newAcks(plain, nil, &Config{Concurrency: 1}), false},
		{"--rest", newAcks(plain, nil, &Config{Concurrency: 8, Rest: time.Second}), false},
		{"--max-jobs", newAcks(plain, nil, &Config{Concurrency: 8, MaxJobs: 100}), false},
		{"Horizon", newAcks(plain, &horizon.Recorder{}, &Config{Concurrency: 8}), true},
		{"replica acknowledgements", newAcks(confirmed, nil, &Config{Concurrency: 8}), false},
	} {
		if tc.a.mayRide != tc.want {
			t.Errorf("%s: mayRide %v, want %v", tc.name, tc.a.mayRide, tc.want)
		}
	}
}
