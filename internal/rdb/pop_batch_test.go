package rdb

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// One ticketed pop of n jobs leaves exactly the state n pops of Laravel's own script leave
// (run by Laravel 8's RedisQueue through phpredis), ticket key aside, and replies the same
// job and reserved bytes in the same order: a PHP worker sharing the queue sees the same
// :reserved members and attempts. The seed mixes shapes cjson re-encodes differently,
// fewer notify tokens than jobs, and a member already reserved (the first job's reserved
// copy, whose score the pop moves).
func TestPopTicketParity(t *testing.T) {
	testenv.NeedPHP(t)
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	c0 := srv.Client(t, 0)
	other := `{"uuid":"u2","job":"A@b","data":{"x":"a/b","list":[]},"id":"2","attempts":"3"}`
	seed := state{
		"queues:%Q":          list(sampleS8, sampleS12, other, `{"attempts":0,"n":1e300}`, `{"left":"behind","attempts":0}`),
		"queues:%Q:notify":   ones(2),
		"queues:%Q:reserved": zset(sampleS8r, now-30),
	}
	const n = 4
	goSide, phpSide := newSide(t, ""), newSide(t, "")
	for _, s := range []side{goSide, phpSide} {
		cleanupPrefix(t, c0, s.prefix)
		seedState(t, c0, s.prefix, seed.withQueue(s.seg))
	}

	r, err := New(c0, Options{Prefix: goSide.prefix})
	mustNoErr(t, err)
	jobs, err := r.PopTicket(ctx, goSide.queue, now+90, n, Ticket{Owner: "w1", Seq: 1, Keep: 90e9})
	mustNoErr(t, err)
	var goOut []string
	for _, j := range jobs {
		goOut = append(goOut, popResult(j.Job, j.Reserved))
	}

	var phpOut []string
	php := testenv.PHPEnv{Redis: srv, Prefix: phpSide.prefix, RetryAfter: 90}
	for range n {
		out := php.Run(t, nil, "queue_op.php", "--queue="+phpSide.queue, fmt.Sprintf("--now=%d", now), "pop-script")
		phpOut = append(phpOut, canonical(t, "pop-script", out))
	}
	if strings.Join(goOut, "\n") != strings.Join(phpOut, "\n") {
		t.Errorf("replies differ\n  go:\n%s\n php:\n%s", strings.Join(goOut, "\n"), strings.Join(phpOut, "\n"))
	}

	goQ, _ := parityState(t, c0, nil, goSide)
	phpQ, _ := parityState(t, c0, nil, phpSide)
	if _, ok := goQ["queues:%Q:laraq-pop:w1"]; !ok {
		t.Errorf("no ticket kept: %s", showState(goQ))
	}
	delete(goQ, "queues:%Q:laraq-pop:w1")
	if !sameState(goQ, phpQ, 0) {
		t.Errorf("queue keys differ\n  go: %s\n php: %s", showState(goQ), showState(phpQ))
	}
	if z := phpQ["queues:%Q:reserved"].ZSet; len(z) != n || z[0].Score != float64(now+90) {
		t.Errorf("PHP left reserved %+v, want %d members scored now+90: the comparison proves little", z, n)
	}
}

// A call takes at most MaxPop jobs however many it is asked for: the script reserves them
// with one ZADD, whose arguments Lua's unpack must hold.
func TestPopAtMostMaxPop(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, variants()[0])
	all := payloads(MaxPop+1, `{"n":%d,"attempts":0}`)
	mustNoErr(t, e.r.PushBulk(ctx, e.queue, toBytes(all)))
	jobs, err := e.r.PopTicket(ctx, e.queue, until, 3*MaxPop, Ticket{Owner: "w", Seq: 1, Keep: 90e9})
	mustNoErr(t, err)
	if len(jobs) != MaxPop || string(jobs[MaxPop-1].Job) != all[MaxPop-1] {
		t.Fatalf("popped %d jobs", len(jobs))
	}
	again, err := e.r.PopTicket(ctx, e.queue, until, 3*MaxPop, Ticket{Owner: "w", Seq: 1, Keep: 90e9})
	mustNoErr(t, err)
	if len(again) != MaxPop {
		t.Fatalf("asked again, got %d jobs", len(again))
	}
	k := e.r.keysOf(e.queue)
	ready, _ := e.c.LRange(ctx, k.Queue, 0, -1).Result()
	reserved, _ := e.c.ZCard(ctx, k.Reserved).Result()
	tokens, _ := e.c.LLen(ctx, k.Notify).Result()
	if len(ready) != 1 || ready[0] != all[MaxPop] || reserved != MaxPop || tokens != 1 {
		t.Fatalf("left ready %q, %d reserved, %d tokens", ready, reserved, tokens)
	}
}
