package payload

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/phpser"
)

// Laravel Horizon's RedisQueue changes every payload it pushes (laravel/horizon 5.x on
// Laravel 10.x and 11.x): createPayloadArray sets id to the uuid, then pushRaw runs
// JobPayload::prepare, which decodes the payload, merges in type, tags, silenced and
// pushedAt (array_merge: keys already present keep their place, new ones are appended
// in that order) and encodes it again with plain json_encode, so non-ASCII text becomes
// \uXXXX and every "/" is "\/" (the framework's own encoding keeps UTF-8 raw).

// The command classes JobPayload::determineType recognises (with instanceof, so
// subclasses too; HorizonType compares names, so a subclass is "job" here).
const (
	BroadcastEventClass          = `Illuminate\Broadcasting\BroadcastEvent`
	CallQueuedListenerClass      = `Illuminate\Events\CallQueuedListener`
	SendQueuedMailableClass      = `Illuminate\Mail\SendQueuedMailable`
	SendQueuedNotificationsClass = `Illuminate\Notifications\SendQueuedNotifications`
)

// HorizonPrepare is what JobPayload::prepare learns from the job object itself, which a
// Go dispatcher does not have.
type HorizonPrepare struct {
	// PushedAt is the time of the push; pushedAt is written as microtime(true) prints
	// ("1729411372.3932"). Required.
	PushedAt time.Time
	// Tags are the command's explicit tags: what the tags() method of its PHP class
	// returns (of the event for a queued listener, of the mailable, notification or
	// broadcast event for those wrappers). Tags::for uses them, duplicates removed,
	// instead of the automatic ones. Empty: the automatic tags, "Class:key" for each
	// Eloquent model the command holds in a property (see HorizonTags).
	Tags []string
	// Silenced marks a command whose class implements Laravel\Horizon\Contracts\Silenced.
	Silenced bool
	// SilencedClasses is horizon.silenced of config/horizon.php.
	SilencedClasses []string
	// Raw prepares the payload as Horizon's pushRaw does when no job object comes with
	// it (Queue::pushRaw, `php artisan queue:retry`): type "job", the payload's own tags
	// only, not silenced, and id left as it is (createPayloadArray, which sets id = uuid,
	// did not run). Tags, Silenced and SilencedClasses are ignored.
	Raw bool
	// Later prepares the payload of a delayed push. Horizon's later() builds it with
	// createPayload($job, $queue, $data), without the delay, so on Laravel 12.11+, whose
	// payloads carry "delay", it is written null; an absent key stays absent.
	Later bool
}

// PrepareForHorizon turns a payload built for Laravel's RedisQueue (BuildObject,
// BuildString, or any framework payload) into the bytes Horizon's RedisQueue::push
// stores for the same job: id = uuid, then type, tags (the payload's own tags first),
// silenced and pushedAt, written with plain json_encode. The result is what a dispatch
// through Horizon leaves in the queue, byte for byte; push it (and record it with
// rdb.Horizon.Pushed) instead of the input.
//
// What Go cannot see: a tags() method (pass Tags), the Silenced interface (pass
// Silenced), subclasses of the framework's wrapper classes (typed "job" here), and
// models a command holds without SerializesModels (PHP serializes those whole; only
// ModelIdentifier values are recognised). A command Go cannot unserialize (encrypted
// with ShouldBeEncrypted) gives an error when its automatic tags or its underlying class
// are needed: pass Tags, or no SilencedClasses.
func PrepareForHorizon(raw []byte, o HorizonPrepare) ([]byte, error) {
	if o.PushedAt.IsZero() {
		return nil, errors.New("payload: horizon: HorizonPrepare.PushedAt is required")
	}
	v, err := DecodeValue(raw)
	if err != nil {
		return nil, fmt.Errorf("payload: horizon: %w", err)
	}
	if v.Kind != KindArray || len(v.Items) > 0 && v.IsList() {
		return nil, errors.New("payload: horizon: the payload is not a JSON object")
	}
	if o.Raw {
		return prepareRaw(v, o.PushedAt, len(raw))
	}
	uuid := v.Get("uuid")
	if uuid == nil || uuid.Kind != KindString || uuid.Str == "" {
		return nil, errors.New("payload: horizon: the payload has no uuid (Horizon sets id = uuid and keys the job by it)")
	}
	v.Set("id", *uuid)
	if d := v.Get("delay"); o.Later && d != nil {
		v.Set("delay", Value{Kind: KindNull})
	}

	job := valueStr(v.Get("job"))
	var data *Value
	if d := v.Get("data"); d != nil {
		data = d
	}
	commandName := valueStr(data.Get("commandName"))
	objectJob := job == CallQueuedHandler && data.Get("command") != nil
	typ := HorizonType(commandName)
	if !objectJob {
		typ = "job"
	}

	// The command is unserialized only when something needs it.
	var cmd *phpser.Value
	var cmdErr error
	command := func() (*phpser.Value, error) {
		if cmd == nil && cmdErr == nil {
			cmd, cmdErr = phpser.DecodeString(valueStr(data.Get("command")))
			if cmdErr != nil {
				cmdErr = fmt.Errorf("payload: horizon: data.command cannot be unserialized (encrypted?): %w", cmdErr)
			}
		}
		return cmd, cmdErr
	}

	var auto []string
	switch {
	case !objectJob:
		// is_string($job): no automatic tags.
	case len(o.Tags) > 0:
		auto = unique(o.Tags)
	default:
		c, err := command()
		if err != nil {
			return nil, fmt.Errorf("%w; pass HorizonPrepare.Tags", err)
		}
		auto = HorizonTags(c)
	}
	tags := Value{Kind: KindArray}
	if old := v.Get("tags"); old != nil && old.Kind == KindArray {
		for _, it := range old.Items {
			tags.Items = append(tags.Items, Item{Value: it.Value})
		}
	}
	for _, t := range auto {
		tags.Items = append(tags.Items, Item{Value: Value{Kind: KindString, Str: t}})
	}
	for i := range tags.Items {
		// array_merge renumbers: the merged tags are always a list.
		tags.Items[i].Key = strconv.Itoa(i)
	}

	silenced := o.Silenced
	if !silenced && len(o.SilencedClasses) > 0 {
		underlying := job
		if objectJob {
			underlying = commandName
			if typ != "job" {
				c, err := command()
				if err != nil {
					return nil, fmt.Errorf("%w; cannot tell the %s's class for horizon.silenced", err, typ)
				}
				underlying = underlyingClass(c, typ)
			}
		}
		for _, s := range o.SilencedClasses {
			if s == underlying {
				silenced = true
				break
			}
		}
	}

	return setHorizonKeys(v, typ, tags, silenced, o.PushedAt, len(raw))
}

// setHorizonKeys merges JobPayload::prepare's keys into v and encodes it with json_encode.
func setHorizonKeys(v Value, typ string, tags Value, silenced bool, pushedAt time.Time, size int) ([]byte, error) {
	v.Set("type", Value{Kind: KindString, Str: typ})
	v.Set("tags", tags)
	v.Set("silenced", Value{Kind: KindBool, Bool: silenced})
	v.Set("pushedAt", Value{Kind: KindString, Str: php.FloatString(float64(pushedAt.UnixMicro()) / 1e6)})
	out, err := v.AppendJSON(make([]byte, 0, size+size/4+128), 0)
	if err != nil {
		return nil, fmt.Errorf("payload: horizon: %w", err)
	}
	return out, nil
}

// prepareRaw is JobPayload::prepare(null): what Horizon's pushRaw stores for a payload
// pushed without a job object.
func prepareRaw(v Value, pushedAt time.Time, size int) ([]byte, error) {
	if id := v.Get("uuid"); id == nil || id.Kind == KindNull {
		if id = v.Get("id"); id == nil || id.Kind == KindNull {
			return nil, errors.New("payload: horizon: the payload has neither uuid nor id (Horizon keys a job by uuid ?? id)")
		}
	}
	tags := Value{Kind: KindArray}
	if old := v.Get("tags"); old != nil && old.Kind == KindArray {
		// array_merge($tags, []): integer keys are renumbered, string keys kept.
		n := 0
		for _, it := range old.Items {
			if _, err := strconv.Atoi(it.Key); err == nil {
				it.Key = strconv.Itoa(n)
				n++
			}
			tags.Items = append(tags.Items, it)
		}
	}
	return setHorizonKeys(v, "job", tags, false, pushedAt, size)
}

// HorizonType is JobPayload::determineType for a command class: broadcast, event, mail,
// notification for the framework's queued wrappers, job for everything else.
func HorizonType(commandName string) string {
	switch commandName {
	case BroadcastEventClass:
		return "broadcast"
	case CallQueuedListenerClass:
		return "event"
	case SendQueuedMailableClass:
		return "mail"
	case SendQueuedNotificationsClass:
		return "notification"
	}
	return "job"
}

// HorizonTags returns Horizon's automatic tags for an unserialized command (Tags::for
// without explicit tags): "Class:key" for each Eloquent model held in a property of the
// target, in property order, duplicates removed. The target is the command itself, or
// for the framework's wrappers the broadcast event, the listener's event (data[0]), the
// mailable or the notification. SerializesModels writes a model as a ModelIdentifier
// (class, id) and a collection of models as one with a list of ids; both are read here.
// Properties of nested objects are not looked into, as in Horizon.
func HorizonTags(command *phpser.Value) []string {
	target := command.Deref()
	switch HorizonType(target.Class()) {
	case "broadcast":
		target, _ = target.Prop("event")
	case "event":
		data, _ := target.Prop("data")
		target = nil
		if data != nil && data.Deref().Kind() == phpser.KindArray {
			if first, ok := data.Deref().Lookup(phpser.IntKey(0)); ok {
				target = first
			}
		}
	case "mail":
		target, _ = target.Prop("mailable")
	case "notification":
		target, _ = target.Prop("notification")
	}
	if target == nil || target.Deref().Kind() != phpser.KindObject {
		return nil
	}
	var tags []string
	for _, e := range target.Deref().Entries() {
		m := e.Value.Deref()
		if m.Kind() != phpser.KindObject || m.Class() != phpser.ModelIdentifierClass {
			continue
		}
		class, _ := m.Prop("class")
		id, _ := m.Prop("id")
		if class == nil || class.Deref().Kind() != phpser.KindString || id == nil {
			continue
		}
		id = id.Deref()
		if id.Kind() == phpser.KindArray {
			for _, k := range id.Entries() {
				tags = append(tags, class.Deref().Str()+":"+phpString(k.Value.Deref()))
			}
			continue
		}
		tags = append(tags, class.Deref().Str()+":"+phpString(id))
	}
	return unique(tags)
}

// underlyingClass is JobPayload::underlyingJob's class for a wrapper command.
func underlyingClass(command *phpser.Value, typ string) string {
	c := command.Deref()
	var prop string
	switch typ {
	case "broadcast":
		prop = "event"
	case "event":
		cls, _ := c.Prop("class") // the listener class, a string
		if cls == nil {
			return ""
		}
		return cls.Deref().Str()
	case "mail":
		prop = "mailable"
	case "notification":
		prop = "notification"
	}
	if p, ok := c.Prop(prop); ok {
		return p.Deref().Class()
	}
	return ""
}

// phpString is PHP's string conversion of a model key ("" for an array or object).
func phpString(v *phpser.Value) string {
	if s, ok := v.StringCast(); ok {
		return s
	}
	return ""
}

// unique drops repeated strings, keeping the first of each (Collection::unique).
func unique(in []string) []string {
	out := make([]string, 0, len(in))
	seen := make(map[string]bool, len(in))
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func valueStr(v *Value) string {
	if v == nil || v.Kind != KindString {
		return ""
	}
	return v.Str
}
