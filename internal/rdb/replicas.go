package rdb

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// ReplicaAcks makes the acknowledgements of a worker (the deletion of a finished or
// failed job, a release) wait until replicas hold them: WAIT after the writes. Redis
// replicates asynchronously, so without it a failover can undo an acknowledgement the
// old master took, and the job runs again.
type ReplicaAcks struct {
	// Replicas is how many replicas must confirm an acknowledgement. 0: none (the
	// default; acknowledgements are not confirmed).
	Replicas int
	// Timeout is how long an acknowledgement waits for them (WAITs of at most a second
	// each) before it counts as done unconfirmed. Default DefaultReplicaAckTimeout.
	Timeout time.Duration
	// OnConfirming is called when acknowledgements stop being confirmed (confirming
	// false, err a *NotReplicatedError: one waited Timeout in vain) and when they are
	// confirmed again. Meanwhile they do not wait: a replica that answers no WAIT for
	// Timeout is gone, or lagging so far that waiting for it would stop every worker.
	// A WAIT of 1 ms every second finds out when it is back. Default nil.
	OnConfirming func(confirming bool, err error)
}

// DefaultReplicaAckTimeout is ReplicaAcks.Timeout's default: long enough for a Sentinel
// failover to move the clients to the new master (about a second after the switch) and
// for the acknowledgement sent again there to be confirmed.
const DefaultReplicaAckTimeout = 5 * time.Second

// replicaProbeEvery is how often unconfirmed acknowledgements ask whether the replicas
// are back.
const replicaProbeEvery = time.Second

// NotReplicatedError reports writes that fewer replicas than asked confirmed in time.
// The writes were made on the master; a failover before a replica holds them may undo
// them.
type NotReplicatedError struct {
	Want, Got int
	Waited    time.Duration
}

func (e *NotReplicatedError) Error() string {
	return fmt.Sprintf("confirmed by %d of %d replicas within %s (WAIT)", e.Got, e.Want, e.Waited.Round(time.Millisecond))
}

// replicaAcks runs acknowledgements on one connection of its own, each followed by WAIT
// there. WAIT waits for every write the connection made before it, so a WAIT that came
// short is repeated alone, on the same connection, until the replicas confirm or the
// timeout is spent. A connection that fails (the master went away, or became a replica
// and refuses writes and WAIT) is dropped and the error returned: the caller sends the
// acknowledgement again, on a fresh connection to the master of the moment, where it
// does the work the old master did not replicate and waits for that master's replicas.
type replicaAcks struct {
	client  connector
	want    int
	timeout time.Duration
	step    int64 // one WAIT's timeout, milliseconds
	notify  func(bool, error)

	mu          sync.Mutex
	conn        *redis.Conn
	unconfirmed bool      // the last acknowledgement waited in vain
	probed      time.Time // when unconfirmed ones last asked whether the replicas are back
}

// connector is a client that hands out a connection of its own: *redis.Client, for one
// server or through Sentinel, or a wrapper of one.
type connector interface{ Conn() *redis.Conn }

func newReplicaAcks(client redis.UniversalClient, o ReplicaAcks) (*replicaAcks, error) {
	if o.Replicas <= 0 {
		return nil, nil
	}
	c, ok := client.(connector)
	if !ok {
		return nil, fmt.Errorf("rdb: acknowledgements confirmed by replicas need one Redis server or Sentinel, not a %T (WAIT confirms the writes of one connection)", client)
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultReplicaAckTimeout
	}
	if o.Timeout < time.Millisecond {
		return nil, fmt.Errorf("rdb: replica acknowledgement timeout %s: want 1ms or more", o.Timeout)
	}
	return &replicaAcks{client: c, want: o.Replicas, timeout: o.Timeout,
		step: min(o.Timeout, time.Second).Milliseconds(), notify: o.OnConfirming}, nil
}

// pipelined sends fn's commands and a WAIT in one pipeline on the acknowledgements'
// connection, then waits for the replicas (see confirm). cmds are fn's commands.
func (a *replicaAcks) pipelined(ctx context.Context, fn func(p redis.Pipeliner)) (cmds []redis.Cmder, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	start, waitMS := time.Now(), a.waitMS()
	var wait *redis.Cmd
	cmds, err = a.connection().Pipelined(ctx, func(p redis.Pipeliner) error {
		fn(p)
		if waitMS > 0 {
			wait = p.Do(ctx, "wait", a.want, waitMS)
		}
		return nil
	})
	if wait != nil && len(cmds) > 0 && cmds[len(cmds)-1] == wait {
		cmds = cmds[:len(cmds)-1]
	}
	if err == nil || (wait != nil && err == wait.Err()) {
		err = a.confirm(ctx, start, wait)
	}
	if err != nil {
		a.drop()
	}
	return cmds, err
}

// do runs fn's commands on the acknowledgements' connection, then waits for the
// replicas: for a script, whose NOSCRIPT fallback needs a round trip of its own.
func (a *replicaAcks) do(ctx context.Context, fn func(c redis.Scripter) error) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	start := time.Now()
	conn := a.connection()
	err := fn(conn)
	if err == nil {
		var wait *redis.Cmd
		if waitMS := a.waitMS(); waitMS > 0 {
			wait = conn.Do(ctx, "wait", a.want, waitMS)
		}
		err = a.confirm(ctx, start, wait)
	}
	if err != nil {
		a.drop()
	}
	return err
}

// waitMS is the timeout of the WAIT after an acknowledgement's writes: a step while
// acknowledgements are confirmed; while they are not, 1 ms once a second (the probe),
// else none.
func (a *replicaAcks) waitMS() int64 {
	if !a.unconfirmed {
		return a.step
	}
	if time.Since(a.probed) < replicaProbeEvery {
		return 0
	}
	a.probed = time.Now()
	return 1
}

// confirm reads the reply of the WAIT sent after the writes (nil: none was sent) and,
// while it comes short and the timeout is not spent, sends WAIT again on the same
// connection. A WAIT that fails is returned; replicas that never confirm make the
// acknowledgements unconfirmed (OnConfirming) and return nil: the writes were made.
func (a *replicaAcks) confirm(ctx context.Context, start time.Time, wait *redis.Cmd) error {
	if wait == nil {
		return nil
	}
	for {
		n, err := wait.Int()
		if err != nil {
			return fmt.Errorf("WAIT %d: %w", a.want, err)
		}
		if n >= a.want {
			if a.unconfirmed {
				a.unconfirmed = false
				a.changed(true, nil)
			}
			return nil
		}
		if ctx.Err() != nil {
			return nil // made; the caller is stopping
		}
		if a.unconfirmed || time.Since(start) >= a.timeout {
			if !a.unconfirmed {
				a.unconfirmed, a.probed = true, time.Now()
				a.changed(false, &NotReplicatedError{Want: a.want, Got: n, Waited: time.Since(start)})
			}
			return nil
		}
		step := min(a.step, max(1, (a.timeout-time.Since(start)).Milliseconds()))
		wait = a.conn.Do(ctx, "wait", a.want, step)
	}
}

func (a *replicaAcks) changed(confirming bool, err error) {
	if a.notify != nil {
		a.notify(confirming, err)
	}
}

func (a *replicaAcks) connection() *redis.Conn {
	if a.conn == nil {
		a.conn = a.client.Conn()
	}
	return a.conn
}

func (a *replicaAcks) drop() {
	if a.conn != nil {
		_ = a.conn.Close()
		a.conn = nil
	}
}
