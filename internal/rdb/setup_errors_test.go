package rdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/testenv"
)

// replyErr is a Redis error reply as go-redis returns it.
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

var _ redis.Error = replyErr("")

// The replies of Redis 5, 6 and 7 (and what 7.2 says instead) to each refusal no retry
// heals, and to errors that are none, as servers write them.
func TestReasonOfRedisReplies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		reply   string
		reason  error
		command string
	}{
		{"READONLY You can't write against a read only replica.", ErrReadOnly, ""},
		{"READONLY You can't write against a read only replica. script: 5772016d0a75f58794cfaf35009cdf9d5225021e, on @user_script:1.", ErrReadOnly, ""},
		{"ERR Error running script (call to f_5772016d0a75f58794cfaf35009cdf9d5225021e): @user_script:1: @user_script: 1: -READONLY You can't write against a read only replica. ", ErrReadOnly, ""},
		{"CROSSSLOT Keys in request don't hash to the same slot", ErrCrossSlot, ""},
		{"NOPERM this user has no permissions to run the 'evalsha' command", ErrNoPermission, "evalsha"},
		{"NOPERM this user has no permissions to run the 'evalsha' command or its subcommand", ErrNoPermission, "evalsha"},
		{"NOPERM User lq1 has no permissions to run the 'ltrim' command script: 9e17, on @user_script:1.", ErrNoPermission, "ltrim"},
		{"NOPERM this user has no permissions to access one of the keys used as arguments", ErrNoPermission, ""},
		{"ERR The user executing the script can't run this command or subcommand script: 9e17, on @user_script:1.", ErrNoPermission, ""},
		{"ERR unknown command 'evalsha', with args beginning with: 'abc' '0' ", ErrUnknownCommand, "evalsha"},
		{"ERR unknown command `evalsha`, with args beginning with: `abc`, `0`, ", ErrUnknownCommand, "evalsha"},
		{"NOSCRIPT No matching script. Please use EVAL.", ErrNoScript, ""},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", ErrWrongType, ""},
		{"WRONGTYPE lq_queues:default:notify holds a string, not a list", ErrWrongType, ""},
		{"ERR Error running script (call to f_f5fc): @user_script:1: WRONGTYPE Operation against a key holding the wrong kind of value", ErrWrongType, ""},
		// Not refusals of the setup.
		{"OOM command not allowed when used memory > 'maxmemory'.", nil, ""},
		{"WRONGPASS invalid username-password pair or user is disabled.", nil, ""},
		{"LOADING Redis is loading the dataset in memory", nil, ""},
		{"ERR Error running script (call to f_1): @user_script:3: user_script:3: attempt to index a nil value", nil, ""},
		{"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", nil, ""},
	} {
		err := fmt.Errorf("rdb: pop from queue %q: %w", "default", replyErr(tc.reply))
		if got := reasonOf(err); got != tc.reason {
			t.Errorf("%q: reason %v, want %v", tc.reply, got, tc.reason)
		}
		ce, ok := ConfigErrorOf(nil, "default", err).(*ConfigError)
		if ok != (tc.reason != nil) {
			t.Errorf("%q: ConfigErrorOf gives %T", tc.reply, ConfigErrorOf(nil, "default", err))
			continue
		}
		if !ok {
			continue
		}
		if ce.Command != tc.command || !errors.Is(ce, tc.reason) || ce.Queue != "default" {
			t.Errorf("%q: %+v", tc.reply, ce)
		}
		if line := ce.Error(); strings.Contains(line, "\n") || strings.Contains(line, "@user_script") || !strings.Contains(line, "; fix: ") {
			t.Errorf("%q: message %q", tc.reply, line)
		}
	}
	if reasonOf(errors.New("READONLY not a reply")) != nil || reasonOf(context.Canceled) != nil {
		t.Error("an error that is no Redis reply was classified")
	}
}

// A key of a queue that holds the wrong type fails pop, migrate, release and unreserve
// before their first write: every key is as it was, and the error names the key, its
// type and the queue.
func TestWrongTypeFailsBeforeTheFirstWrite(t *testing.T) {
	t.Parallel()
	const (
		job     = `{"uuid":"u1","job":"X@y","data":[],"attempts":0,"id":"i1"}`
		held    = `{"uuid":"u2","job":"X@y","data":[],"attempts":1,"id":"i2"}`
		invalid = `not json`
		now     = 1000
	)
	healthy := state{
		"queues:%Q":          list(job, invalid),
		"queues:%Q:notify":   ones(2),
		"queues:%Q:delayed":  zset(held, 900),
		"queues:%Q:reserved": zset(held, 900),
		"queues:%Q:invalid":  list("old"),
	}
	ops := []struct {
		name   string
		breaks []string // the keys a broken copy of fails the operation
		run    func(ctx context.Context, e *env) error
	}{
		{"pop", []string{"", ":reserved", ":notify", ":invalid"}, func(ctx context.Context, e *env) error {
			_, err := e.r.PopTicket(ctx, e.queue, now+90, 2, Ticket{Owner: "w", Seq: 1, Keep: time.Minute})
			return err
		}},
		{"migrate-delayed", []string{":delayed", "", ":notify"}, func(ctx context.Context, e *env) error {
			_, err := e.r.MigrateDelayed(ctx, e.queue, now, NoLimit)
			return err
		}},
		{"migrate-reserved", []string{":reserved", "", ":notify"}, func(ctx context.Context, e *env) error {
			_, err := e.r.MigrateReserved(ctx, e.queue, now, NoLimit)
			return err
		}},
		{"release", []string{":delayed", ":reserved"}, func(ctx context.Context, e *env) error {
			_, err := e.r.Release(ctx, e.queue, []byte(held), now+5)
			return err
		}},
		{"unreserve", []string{"", ":reserved", ":notify"}, func(ctx context.Context, e *env) error {
			_, err := e.r.Unreserve(ctx, e.queue, []byte(job), []byte(held))
			return err
		}},
		// Without the check the guard was set before the push failed, and the retry of
		// a chain's next job answered "already pushed": the job lost.
		{"push-once", []string{"", ":notify"}, func(ctx context.Context, e *env) error {
			_, err := e.r.PushOnce(ctx, e.queue, []byte(job), "i1", time.Minute)
			return err
		}},
	}
	v := variants()[0]
	for _, op := range ops {
		for _, broken := range op.breaks {
			t.Run(op.name+"/queues:Q"+broken, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, v)
				seed := state{}
				for k, s := range healthy {
					seed[k] = s
				}
				seed["queues:%Q"+broken] = str("overwritten")
				e.seed(t, seed)
				before := e.dump(t)
				err := op.run(context.Background(), e)
				var ce *ConfigError
				if !errors.As(err, &ce) || !errors.Is(err, ErrWrongType) {
					t.Fatalf("error %v, want a *ConfigError of ErrWrongType", err)
				}
				key := e.prefix + "queues:" + e.seg + broken
				if ce.Key != key || ce.Type != "string" || ce.Queue != e.queue {
					t.Errorf("error names key %q (%s) of queue %q, want %q (string) of %q", ce.Key, ce.Type, ce.Queue, key, e.queue)
				}
				if !strings.Contains(ce.Error(), key+" of queue") || !strings.Contains(ce.Error(), "holds a string") {
					t.Errorf("message %q does not name the key and its type", ce.Error())
				}
				assertState(t, "after the refused "+op.name, e.dump(t), before)
			})
		}
	}
}

// The script's own reply names the key too, for whoever reads Redis' replies (redis-cli,
// the slow log, another client).
func TestWrongTypeReplyNamesTheKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t, variants()[0])
	e.seed(t, state{"queues:%Q": list(`{"attempts":0}`), "queues:%Q:notify": str("x")})
	_, err := e.r.PopMany(context.Background(), e.queue, 2000, 1)
	var re redis.Error
	want := "WRONGTYPE " + e.prefix + "queues:" + e.seg + ":notify holds a string, not a list"
	if !errors.As(err, &re) || re.Error() != want {
		t.Fatalf("reply %v, want %q", err, want)
	}
}

// A replica refuses the pop with READONLY, an ACL user without EVALSHA with NOPERM
// naming the command, a server without EVALSHA with an unknown command: each a
// *ConfigError naming the server, and nothing is reserved.
func TestRefusalsOfTheSetup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pop := func(c redis.UniversalClient) (*RDB, error) {
		r, err := New(c, Options{Prefix: "setup_"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = r.PopTicket(ctx, "default", 2000000000, 1, Ticket{Owner: "o", Seq: 1, Keep: time.Minute})
		return r, err
	}
	check := func(t *testing.T, err error, reason error, server string, parts ...string) {
		t.Helper()
		var ce *ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, reason) || ce.Server != server {
			t.Fatalf("error %v, want a *ConfigError of %v naming %s", err, reason, server)
		}
		for _, p := range parts {
			if !strings.Contains(ce.Error(), p) {
				t.Errorf("message %q lacks %q", ce.Error(), p)
			}
		}
	}

	t.Run("replica", func(t *testing.T) {
		t.Parallel()
		master := testenv.PrivateRedis(t)
		replica := testenv.PrivateRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
		mc := master.Client(t, 0)
		if err := mc.RPush(ctx, "setup_queues:default", `{"attempts":0}`).Err(); err != nil {
			t.Fatal(err)
		}
		rc := replica.Client(t, 0)
		testenvEventually(t, func() bool { n, _ := rc.LLen(ctx, "setup_queues:default").Result(); return n == 1 })
		_, err := pop(rc)
		check(t, err, ErrReadOnly, replica.Addr+"/0", "read-only replica", "point laraq at the master")
		if n, _ := mc.ZCard(ctx, "setup_queues:default:reserved").Result(); n != 0 {
			t.Errorf("%d reserved", n)
		}
	})
	t.Run("acl-without-evalsha", func(t *testing.T) {
		t.Parallel()
		srv := testenv.PrivateRedis(t)
		admin := srv.Client(t, 0)
		if err := admin.Do(ctx, "acl", "setuser", "worker", "on", ">pw", "~*", "&*", "+@all", "-evalsha").Err(); err != nil {
			t.Fatal(err)
		}
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, Username: "worker", Password: "pw"})
		t.Cleanup(func() { c.Close() })
		_, err := pop(c)
		check(t, err, ErrNoPermission, srv.Addr+"/0", "may not run EVALSHA", "ACL SETUSER worker +evalsha")
		if IsAuthError(err) || strings.Contains(err.Error(), "pw") {
			t.Errorf("NOPERM taken for refused credentials, or the password shown: %v", err)
		}
	})
	t.Run("no-evalsha", func(t *testing.T) {
		t.Parallel()
		srv := testenv.PrivateRedis(t, "--rename-command", "EVALSHA", "")
		_, err := pop(srv.Client(t, 0))
		check(t, err, ErrUnknownCommand, srv.Addr+"/0", "does not know EVALSHA")
	})
}

func testenvEventually(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// FuzzConfigErrorOf: any reply Redis (or a proxy) may send is classified without a
// panic, and a *ConfigError's message is one line naming the server and the fix.
func FuzzConfigErrorOf(f *testing.F) {
	for _, s := range []string{
		"READONLY You can't write against a read only replica.",
		"ERR Error running script (call to f_1): @user_script:1: @user_script: 1: -READONLY x",
		"NOPERM this user has no permissions to run the 'evalsha' command",
		"ERR unknown command `ev\nal`, with args beginning with: ",
		"WRONGTYPE k holds a string, not a list",
		"ERR Error running script @user_script:",
		"CROSSSLOT", "NOSCRIPT\n", "", "ERR", "ERR unknown command '",
	} {
		f.Add(s, "default")
	}
	f.Fuzz(func(t *testing.T, reply, queue string) {
		err := ConfigErrorOf(nil, queue, fmt.Errorf("wrapped: %w", replyErr(reply)))
		ce, ok := err.(*ConfigError)
		if ok != (reasonOf(replyErr(reply)) != nil) {
			t.Fatalf("%q: ConfigErrorOf gives %T", reply, err)
		}
		if !ok {
			return
		}
		msg := ce.Error()
		if strings.ContainsAny(ce.Command, " \n") || !strings.HasPrefix(msg, "redis at no redis client: ") || !strings.Contains(msg, "; fix: ") {
			t.Fatalf("%q: %q", reply, msg)
		}
		if !strings.Contains(queue, "\n") && strings.Contains(msg, "\n") {
			t.Fatalf("%q: message of several lines: %q", reply, msg)
		}
	})
}

// A Sentinel client, bare or as laravel.Connect wraps it, is told from a plain one.
func TestViaSentinel(t *testing.T) {
	t.Parallel()
	fc := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "mymaster", SentinelAddrs: []string{"127.0.0.1:1"}})
	defer fc.Close()
	wrapped := struct{ *redis.Client }{fc}
	plain := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer plain.Close()
	if !ViaSentinel(fc) || !ViaSentinel(wrapped) || ViaSentinel(plain) || ViaSentinel(nil) {
		t.Error("ViaSentinel is wrong")
	}
}
