package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpclass"
	"github.com/laraq/laraq/phpser"
)

// `laraq dispatch --classes FILE`: the class's facts decide what is written, as PHP's
// dispatch of the same object would: the given properties keep the visibility the class
// declares (plain names will do), the others are at their defaults, in serialize()
// order with the release's Queueable properties only where the class uses the trait;
// 9.4+ SerializesModels leaves out what still holds its default, and a
// ShouldBeEncrypted class is encrypted.

// classJob is a job built from the manifest.
type classJob struct {
	class   *phpclass.Class
	live    *phpser.Value // the object PHP holds: the envelope's metadata is read from it
	written *phpser.Value // what serialize() writes of it
	opts    []laraq.DispatchOption
	encrypt bool
}

// newClassJob builds the job of class from the given properties, with --queue and
// --delay applied as onQueue() and delay() would.
func newClassJob(m *phpclass.Manifest, given *phpser.Value, rel laraq.Release, queue *string, delay *time.Duration, encrypt bool) (*classJob, error) {
	c := m.Class(given.Class())
	if c == nil {
		return nil, fmt.Errorf("--classes: the manifest has no class %s, so its visibility and defaults are unknown (run 'laraq classes' for it, or dispatch without --classes)", given.Class())
	}
	live, err := c.Object(given.Entries())
	if err != nil {
		return nil, fmt.Errorf("--props: %w", err)
	}
	j := &classJob{class: c}
	// onQueue() and delay() set the Queueable properties, where the class has them; the
	// job goes where they say either way.
	if queue != nil {
		if _, has := publicProp(c, "queue"); has && !isSet(live, "queue") && !pushedOn[c.Name] {
			live = withProp(live, "queue", phpser.String(*queue))
		}
		j.opts = append(j.opts, laraq.PushOn(*queue))
	}
	if delay != nil {
		if _, has := publicProp(c, "delay"); has && !isSet(live, "delay") {
			live = withProp(live, "delay", phpser.Int(int64(*delay/time.Second)))
		}
		j.opts = append(j.opts, laraq.Later(*delay))
	}
	if j.encrypt = encrypt || c.Encrypted(); j.encrypt {
		j.opts = append(j.opts, laraq.Encrypted())
	}
	j.live = live
	j.written = c.Written(live, rel.AtLeast(9, 4, 0))
	return j, nil
}

// caveats are what laraq cannot do for the class as PHP would, one line each.
func (j *classJob) caveats(rel laraq.Release, manifest string) []string {
	c := j.class
	var out []string
	if mr, err := laraq.ParseRelease(manifest); err == nil && !rel.IsZero() && (mr.Major != rel.Major || mr.Minor != rel.Minor) {
		out = append(out, "the manifest was read from Laravel "+manifest+", the connection is "+rel.String()+": the Queueable properties written are "+manifest+"'s")
	}
	if c.Unique() {
		out = append(out, c.Name+" is ShouldBeUnique: laraq dispatch takes no unique lock for a class given as properties (a Go type implementing laraq.UniqueJob gets one from the Dispatcher)")
	}
	for _, name := range []string{"tries", "backoff", "retryUntil", "displayName"} {
		if mm := c.Method(name); mm != nil && !strings.HasPrefix(mm.DeclaredBy, `Illuminate\`) {
			out = append(out, fmt.Sprintf("%s::%s() is PHP code laraq does not run: the payload's %s is read from the properties only", c.Name, name, metaKey[name]))
		}
	}
	if rel.AtLeast(13, 0, 0) {
		for _, a := range c.Attributes {
			if strings.HasPrefix(a.Name, `Illuminate\Queue\Attributes\`) {
				out = append(out, fmt.Sprintf("%s has #[%s], which Laravel 13 reads into the payload and laraq dispatch does not", c.Name, a.Name[strings.LastIndexByte(a.Name, '\\')+1:]))
			}
		}
	}
	return out
}

var metaKey = map[string]string{"tries": "maxTries", "backoff": "backoff", "retryUntil": "retryUntil", "displayName": "displayName"}

// dispatch queues the job: prepared from the object PHP holds (so the metadata reads
// its defaults), with data.command then replaced by what serialize() writes.
func (j *classJob) dispatch(ctx context.Context, p *laraq.Dispatcher, conn *laraq.Connection, opts []laraq.DispatchOption) (string, error) {
	m, err := p.Prepare(j.live, append(opts, j.opts...)...)
	if err != nil {
		return "", err
	}
	if j.written != j.live {
		if m.Payload, err = withCommand(m.Payload, j.written, conn, j.encrypt); err != nil {
			return "", fmt.Errorf("laraq: %s: %w", j.class.Name, err)
		}
	}
	if err := p.Enqueue(ctx, m); err != nil {
		return "", err
	}
	return m.ID, nil
}

// withCommand replaces data.command of a built payload with cmd serialized (and
// encrypted), written back as Queue::createPayload's json_encode writes it.
func withCommand(raw []byte, cmd *phpser.Value, conn *laraq.Connection, encrypt bool) ([]byte, error) {
	ser, err := phpser.Encode(cmd)
	if err != nil {
		return nil, err
	}
	text := string(ser)
	if encrypt {
		if conn.Encrypter == nil {
			return nil, fmt.Errorf("the class should be encrypted (ShouldBeEncrypted), but there is no APP_KEY to encrypt with")
		}
		if text, err = conn.Encrypter.EncryptCommand(text); err != nil {
			return nil, err
		}
	}
	doc, err := payload.DecodeValue(raw)
	if err != nil {
		return nil, err
	}
	data := doc.Get("data")
	if data == nil || data.Get("command") == nil {
		return nil, fmt.Errorf("the payload has no data.command")
	}
	data.Set("command", payload.Value{Kind: payload.KindString, Str: text})
	return doc.AppendJSON(nil, payload.JSONUnescapedUnicode)
}

// publicProp reports whether the class has a public property of this name.
func publicProp(c *phpclass.Class, name string) (*phpclass.Property, bool) {
	p := c.Property(name)
	return p, p != nil && p.Visibility == "public" && !p.Unwritten
}

// withProp sets a property the object holds.
func withProp(obj *phpser.Value, name string, v *phpser.Value) *phpser.Value {
	ents := append([]phpser.Entry(nil), obj.Entries()...)
	for i := range ents {
		if !ents[i].Key.IsInt() && ents[i].Key.Str() == name {
			ents[i].Value = *v
		}
	}
	return phpser.NewObject(obj.Class(), ents...)
}
