package dispatch

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/payload"
)

// Dispatching through Horizon. Horizon's RedisQueue changes every payload it pushes
// (id = uuid; type, tags, silenced and pushedAt added, see payload.PrepareForHorizon) and
// records the job as pending (JobPushed: StoreJob, StoreMonitoredTags). With
// Connection.Horizon set a Dispatcher does both, the records in the same MULTI as the
// push. What Horizon learns from the PHP object Go states: Tagger and Tags for tags(),
// Silenced and Silence for the Silenced contract.

// forHorizon turns a prepared message into what Horizon's push stores: its payload
// prepared, its id the uuid (Horizon's push returns it). job is the Go value dispatched
// (nil for a string job or a chain's next job). A payload Go cannot prepare fully (a
// command it cannot unserialize, such as an encrypted one, without Tags) keeps the tags
// it has: the dispatch goes on.
func (p *Dispatcher) forHorizon(m *Message, v any, o *Options) {
	if p.cfg.Horizon == nil {
		return
	}
	hp := payload.HorizonPrepare{PushedAt: p.cfg.Now(), SilencedClasses: p.cfg.Horizon.Silenced, Later: m.Delayed}
	if t, ok := v.(job.Tagger); ok {
		hp.Tags = t.Tags()
	}
	if s, ok := v.(job.Silenced); ok && s.Silenced() {
		hp.Silenced = true
	}
	if o != nil {
		if len(o.Tags) > 0 {
			hp.Tags = o.Tags
		}
		hp.Silenced = hp.Silenced || o.Silence
	}
	out, err := payload.PrepareForHorizon(m.Payload, hp)
	if err != nil {
		p.cfg.Horizon.Log.Warn("preparing a job for Horizon in full failed; it is pushed without its automatic tags",
			"queue", m.Queue, "id", m.UUID, "err", err)
		out, err = prepareUntagged(m.Payload, hp)
		if err != nil {
			p.cfg.Horizon.Log.Warn("preparing a job for Horizon failed; it is pushed as built", "queue", m.Queue, "id", m.UUID, "err", err)
			return
		}
	}
	m.Payload, m.ID = out, m.UUID
}

// prepareUntagged prepares as Horizon does for a job without tags of its own: id =
// uuid, then the keys of a raw push, silenced as hp says.
func prepareUntagged(raw []byte, hp payload.HorizonPrepare) ([]byte, error) {
	v, err := payload.DecodeValue(raw)
	if err != nil {
		return nil, err
	}
	uuid := v.Get("uuid")
	if uuid == nil || uuid.Kind != payload.KindString {
		return nil, fmt.Errorf("payload has no uuid")
	}
	v.Set("id", *uuid)
	if d := v.Get("delay"); hp.Later && d != nil {
		v.Set("delay", payload.Value{Kind: payload.KindNull})
	}
	b, err := v.AppendJSON(nil, payload.JSONUnescapedUnicode)
	if err != nil {
		return nil, err
	}
	hp.Raw = true
	out, err := payload.PrepareForHorizon(b, hp)
	if err != nil || !hp.Silenced {
		return out, err
	}
	v, err = payload.DecodeValue(out)
	if err != nil {
		return nil, err
	}
	v.Set("silenced", payload.Value{Kind: payload.KindBool, Bool: true})
	return v.AppendJSON(nil, 0)
}

// enqueueHorizon pushes messages and records them as pushed (Horizon's JobPushed), in
// one MULTI when Horizon's keys are on the queue's client.
func (p *Dispatcher) enqueueHorizon(ctx context.Context, msgs ...*Message) error {
	h := p.cfg.Horizon
	h.LoadScripts(ctx)
	pushes := make([]rdb.Pushing, len(msgs))
	jobs := make([]*rdb.HorizonJob, len(msgs))
	for i, m := range msgs {
		pushes[i] = rdb.Pushing{Queue: m.Queue, Payload: m.Payload, Delayed: m.Delayed, AvailableAt: m.AvailableAt}
		j, err := rdb.HorizonJobFromPayload(m.Payload, h.Connection, m.Queue)
		if err != nil {
			h.Failed("pushed", err)
			continue
		}
		jobs[i] = &j
	}
	records := func(pp redis.Pipeliner) {
		b := &rdb.HorizonBatch{}
		for _, j := range jobs {
			if j != nil {
				if err := h.Rec.Pushed(ctx, b, *j); err != nil {
					h.Failed("pushed", err)
				}
			}
		}
		if _, err := b.Queue(ctx, pp); err != nil {
			h.Failed("pushed", err)
		}
	}
	if !h.Shared {
		if _, err := p.cfg.RDB.PushAllAnd(ctx, pushes, nil); err != nil {
			return fmt.Errorf("laraq: %w", err)
		}
		h.Exec(ctx, "pushed", func(pp redis.Pipeliner) error { records(pp); return nil })
		return nil
	}
	extra, err := p.cfg.RDB.PushAllAnd(ctx, pushes, records)
	if err != nil {
		return fmt.Errorf("laraq: %w", err)
	}
	h.Settle(ctx, "pushed", extra)
	return nil
}

// enqueueOnceHorizon is enqueueOnce with Horizon's pushed record in the same MULTI.
func (p *Dispatcher) enqueueOnceHorizon(ctx context.Context, m *Message, keep time.Duration) error {
	if m.Delayed || !p.cfg.Horizon.Shared {
		return p.enqueueHorizon(ctx, m)
	}
	h := p.cfg.Horizon
	h.LoadScripts(ctx)
	j, jerr := rdb.HorizonJobFromPayload(m.Payload, h.Connection, m.Queue)
	_, extra, err := p.cfg.RDB.PushOnceAnd(ctx, m.Queue, m.Payload, m.ID, keep, func(pp redis.Pipeliner) {
		if jerr == nil {
			_ = h.Rec.Pushed(ctx, pp, j)
		}
	})
	if err != nil {
		return fmt.Errorf("laraq: pushing to queue %s: %w", m.Queue, err)
	}
	if jerr != nil {
		h.Failed("pushed", jerr)
	}
	h.Settle(ctx, "pushed", extra)
	return nil
}

// pushRawHorizon is PushRaw through Horizon's pushRaw: the payload prepared without a
// job object (payload.HorizonPrepare.Raw) and recorded as pushed. It returns the id
// Horizon returns, uuid ?? id.
func (p *Dispatcher) pushRawHorizon(ctx context.Context, queue string, raw []byte) (string, error) {
	m := &Message{Queue: queue, Payload: raw}
	if out, err := payload.PrepareForHorizon(raw, payload.HorizonPrepare{PushedAt: p.cfg.Now(), Raw: true}); err != nil {
		p.cfg.Horizon.Failed("pushed", err)
	} else {
		m.Payload = out
	}
	if err := p.enqueueHorizon(ctx, m); err != nil {
		return "", err
	}
	env, err := payload.Parse(m.Payload)
	if err != nil {
		return "", nil
	}
	if env.UUID != "" {
		return env.UUID, nil
	}
	return env.ID, nil
}

// dispatchedIDs is DispatchBulk's answer for messages pushed together: every id, or
// none after an error (the MULTI pushed all or nothing).
func dispatchedIDs(msgs []*Message, err error) ([]string, error) {
	ids := make([]string, len(msgs))
	if err != nil {
		return ids, err
	}
	for i, m := range msgs {
		ids[i] = m.ID
	}
	return ids, nil
}
