package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/laravel"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

func init() {
	register(&Command{Name: "dispatch", Summary: "queue a job for PHP (or Go) workers, as dispatch(new Job) does", Run: runDispatch})
}

const dispatchUsage = `dispatch [flags] CLASS

Queues a job of the PHP class CLASS with the properties given as JSON (--props), the
way Laravel's dispatch() queues the same object, and prints its job id. Any class
works, Laravel's own included: a queued listener is CLASS
'Illuminate\\Events\\CallQueuedListener' with its class, method and data properties,
and gets Laravel's displayName (the listener class), as do queued mailables,
notifications and broadcast events.

The properties are a JSON object in the readable form 'laraq decode' prints:
{"podcastId": 5, "options": {"a": 1}, "when": {"@class": "Illuminate\\Support\\Carbon",
"date": "2024-01-01 00:00:00.000000", "timezone_type": 3, "timezone": "UTC"}, "status":
{"@enum": "App\\Enums\\Status:Active"}}. Numbers with a '.' or an exponent are floats
(1.0, -0.0, 1e100), others ints. A protected property is named "\u0000*\u0000name", a
private one "\u0000App\\Jobs\\Class\u0000name" (also inside nested objects); plain names
are public. Properties are written in the order given. --props is always the
properties (a property may be called data or job); a whole '{"@class": ...}' object is
accepted too (CLASS may then be left out). To queue again what 'laraq decode' printed,
give that document with --payload instead: its data.command is the job. A --props
document that is a 'laraq decode' document (job CallQueuedHandler@call and a
data.command) is refused with a pointer to --payload.

The properties InteractsWithQueue and Queueable add (job, connection, queue, ...,
chained) are appended with their defaults when none of them is given, as PHP puts
trait properties after the class' own; given ones keep their place and value and the
missing ones are filled in around them (--no-queueable adds nothing). As with
dispatch(): a queue property picks the Redis queue, a delay property sends the job to
:delayed, and the public tries, maxExceptions, backoff, timeout, failOnTimeout and
retryUntil properties become the payload's metadata. --queue and --delay work like
onQueue() and delay(): they set those properties, unless the given properties already
set them, and always decide where the job goes; for a queued listener, mailable or
broadcast event --queue leaves the property null, as Laravel's pushOn() does. --encrypt encrypts the command with the
application's APP_KEY as for a ShouldBeEncrypted class (a true public shouldBeEncrypted
property does too).

With --classes FILE (or LARAQ_CLASSES), a manifest 'laraq classes' wrote, the class's
facts decide what is written, as PHP's dispatch of the same object does: properties
given by their plain names keep the visibility the class declares, a property the
class does not have is an error, the others take their defaults in serialize() order
(a typed one without default stays out), the Queueable properties are those of the
release the manifest was read from and only where the class uses the trait, Laravel
9.4+ SerializesModels leaves out what still holds its default, a ShouldBeEncrypted
class is encrypted, 13.x reads the class's #[Tries], #[Backoff], #[Timeout],
#[MaxExceptions], #[FailOnTimeout], #[DeleteWhenMissingModels] and #[UniqueFor], and a
ShouldBeUnique class takes its unique lock as dispatch() does (nothing is queued, and
the command exits 1, while an earlier dispatch holds it). The lock's id is the class's
uniqueId property; a class whose uniqueId() or uniqueFor() is a method needs
--unique-id ID (and --unique-for SECONDS) saying what it returns. What other PHP code
computes (tries(), backoff(), retryUntil(), displayName(), other attributes) is not
run: a warning says so.`

func runDispatch(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("dispatch", dispatchUsage)
	af := addAppFlags(fs.FlagSet, false, false)
	addHorizonFlags(fs.FlagSet, false)
	propsFile := fs.String("props", "", "JSON `file` with the job's properties (- for stdin)")
	payloadFile := fs.String("payload", "", "a `file` as 'laraq decode' prints a payload (- for stdin): its data.command is the job")
	encrypt := fs.Bool("encrypt", false, "encrypt the command with the application's key, as for a ShouldBeEncrypted class")
	var delay string
	var delaySet bool
	fs.Var(stringFlag{&delay, &delaySet}, "delay", "delay the job by `SECONDS` (sets the delay property like ->delay())")
	noQueueable := fs.Bool("no-queueable", false, "do not add the InteractsWithQueue/Queueable properties")
	var uniqueID, uniqueFor string
	var uniqueIDSet, uniqueForSet bool
	fs.Var(stringFlag{&uniqueID, &uniqueIDSet}, "unique-id", "with --classes, what the ShouldBeUnique class's uniqueId() `method` returns for this job")
	fs.Var(stringFlag{&uniqueFor, &uniqueForSet}, "unique-for", "with --classes, what the ShouldBeUnique class's uniqueFor() `method` returns, in seconds")
	cf := addClassesFlag(fs)
	connection := fs.String("connection", "", "Laravel queue connection `name` the job is for (default: LARAQ_CONNECTION, else \""+laraq.DefaultConnectionName+"\")")
	positional, rc := parseInterleaved(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(positional) > 1 {
		return fs.Fail("takes one CLASS, got %q", positional)
	}
	class := ""
	if len(positional) == 1 {
		class = positional[0]
	}
	cfg, err := af.load(app)
	if err != nil {
		return app.errorf("%v", err)
	}
	classes, err := cf.load(app)
	if err != nil {
		return app.errorf("%v", err)
	}
	var delaySecs int64
	if delaySet {
		if delaySecs, err = strconv.ParseInt(delay, 10, 64); err != nil || delaySecs < 0 {
			return app.errorf("--delay %q: want a whole number of seconds, 0 or more", delay)
		}
	}

	if *propsFile != "" && *payloadFile != "" {
		return fs.Fail("give the job as --props or as --payload, not both")
	}
	read := func(name, file string) ([]byte, error) {
		var b []byte
		var err error
		switch file {
		case "-":
			b, err = io.ReadAll(app.Stdin)
		default:
			b, err = os.ReadFile(file)
		}
		if err != nil {
			return nil, fmt.Errorf("--%s: %v", name, err)
		}
		return b, nil
	}
	var cmd *phpser.Value
	if *payloadFile != "" {
		doc, err := read("payload", *payloadFile)
		if err == nil {
			cmd, err = commandFromPayload(class, doc)
		}
		if err != nil {
			return app.errorf("%v", err)
		}
	} else {
		props := []byte("{}")
		if *propsFile != "" {
			if props, err = read("props", *propsFile); err != nil {
				return app.errorf("%v", err)
			}
		}
		if cmd, err = commandFromProps(class, props); err != nil {
			return app.errorf("%v", err)
		}
	}
	if classes != nil {
		for _, c := range classCaveats(classes, cmd.Class(), cfg.Release) {
			fmt.Fprintf(app.Stderr, "%s: warning: %s\n", app.Name, c)
		}
	} else if !*noQueueable {
		cmd = withTraits(cmd, cfg.Release)
	}

	var opts []laraq.DispatchOption
	if *encrypt {
		opts = append(opts, laraq.Encrypted())
	}
	if af.conn.queueSet {
		queues, err := af.queues()
		if err != nil {
			return app.errorf("%v", err)
		}
		if isSet(cmd, "queue") || pushedOn[cmd.Class()] {
			opts = append(opts, laraq.PushOn(queues[0]))
		} else {
			opts = append(opts, laraq.OnQueue(queues[0]))
		}
	}
	if delaySet {
		d := time.Duration(delaySecs) * time.Second
		if isSet(cmd, "delay") {
			opts = append(opts, laraq.Later(d))
		} else {
			opts = append(opts, laraq.Delay(d))
		}
	}
	if uniqueIDSet {
		opts = append(opts, laraq.UniqueID(uniqueID))
	}
	if uniqueForSet {
		secs, err := strconv.ParseInt(uniqueFor, 10, 64)
		if err != nil || secs < 0 {
			return app.errorf("--unique-for %q: want a whole number of seconds, 0 or more", uniqueFor)
		}
		opts = append(opts, laraq.UniqueFor(time.Duration(secs)*time.Second))
	}
	conn, err := af.connect(ctx, cfg, laravel.ConnectOptions{WithoutFailedStore: true})
	if err != nil {
		return app.errorf("%v", err)
	}
	defer conn.Close()
	if *connection != "" {
		conn.Name = *connection
	}
	var dopts []laraq.Option
	if classes != nil {
		dopts = append(dopts, laraq.WithClasses(classes))
	}
	p, err := laraq.NewDispatcher(conn, dopts...)
	if err != nil {
		return app.errorf("%v", err)
	}
	id, err := p.Dispatch(ctx, cmd, opts...)
	if err != nil {
		return app.errorf("%v", err)
	}
	fmt.Fprintln(app.Stdout, id)
	return 0
}

// parseInterleaved parses flags that may come before or after the positional
// arguments (`dispatch App\Jobs\X --props f.json`), which flag.Parse alone stops at.
func parseInterleaved(fs *FlagSet, args []string) (positional []string, rc int) {
	for {
		if rc := fs.Parse(args); rc >= 0 {
			return nil, rc
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, -1
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), -1
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// pushedOn are the classes Laravel queues with Queue::pushOn($queue, $job), leaving
// their queue property null: the event dispatcher's listeners, Mailable::queue(), and
// the broadcaster's events. --queue picks their queue the same way.
var pushedOn = map[string]bool{
	`Illuminate\Events\CallQueuedListener`:   true,
	`Illuminate\Mail\SendQueuedMailable`:     true,
	`Illuminate\Broadcasting\BroadcastEvent`: true,
}

// isSet reports whether the public property name holds a non-null value (PHP isset).
func isSet(cmd *phpser.Value, name string) bool {
	for _, e := range cmd.Entries() {
		if e.Key.IsInt() {
			continue
		}
		if n, vis, _ := e.Key.Name(); n == name && vis == phpser.Public {
			v := e.Value.Deref()
			return v != nil && !v.IsNull()
		}
	}
	return false
}

// classNameRE is PHP's syntax for a (namespaced) class name.
var classNameRE = regexp.MustCompile(`^(?:[A-Za-z_]|[^\x00-\x7F])(?:[A-Za-z0-9_]|[^\x00-\x7F])*(?:\\(?:[A-Za-z_]|[^\x00-\x7F])(?:[A-Za-z0-9_]|[^\x00-\x7F])*)*$`)

// commandFromProps builds the job object from the --props JSON: a properties object, or
// a {"@class": ...} object. A `laraq decode` document is refused (commandFromPayload
// reads those): a property may be called data or job, so only a document whose job is
// CallQueuedHandler@call and whose data holds a command is taken for one.
func commandFromProps(class string, props []byte) (*phpser.Value, error) {
	var top map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(props), &top) == nil && isDecodeDocument(top) {
		return nil, errors.New("--props holds a 'laraq decode' document (job " + payload.CallQueuedHandler + " with a data.command), not the job's properties: give it with --payload")
	}
	return commandFromObject(class, props, "--props", 0)
}

// commandFromPayload builds the job from a `laraq decode` document (--payload): its
// data.command, a readable object.
func commandFromPayload(class string, doc []byte) (*phpser.Value, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(bytes.TrimSpace(doc), &top); err != nil {
		return nil, fmt.Errorf("--payload: want the JSON document 'laraq decode' prints: %v", err)
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal(top["data"], &d); err != nil || d["command"] == nil {
		return nil, errors.New("--payload: a payload document needs data.command (the output of 'laraq decode'); to give the job's properties, use --props")
	}
	cmd := bytes.TrimSpace(d["command"])
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(cmd, &obj); err != nil || obj["@class"] == nil {
		return nil, errors.New("--payload: data.command is not a readable object (was it decoded with 'laraq decode'? an encrypted command needs --app-key there)")
	}
	return commandFromObject(class, cmd, "--payload: data.command", -1)
}

// isDecodeDocument reports whether a JSON object is a payload as `laraq decode` prints
// it: job CallQueuedHandler@call and a data object holding command.
func isDecodeDocument(top map[string]json.RawMessage) bool {
	var job string
	if json.Unmarshal(top["job"], &job) != nil || job != payload.CallQueuedHandler {
		return false
	}
	var d map[string]json.RawMessage
	return json.Unmarshal(top["data"], &d) == nil && d["command"] != nil
}

// commandFromObject builds the job object from a properties object or a {"@class": ...}
// object. where names the input in errors; offsets are reported into it unless
// base is negative.
func commandFromObject(class string, props []byte, where string, base int) (*phpser.Value, error) {
	if class != "" {
		class = strings.TrimPrefix(class, `\`) // get_class() never has the leading \
		if !classNameRE.MatchString(class) || !utf8.ValidString(class) {
			return nil, fmt.Errorf("%q is not a PHP class name", class)
		}
	}
	lead := len(props) - len(bytes.TrimLeft(props, " \t\r\n"))
	props = bytes.TrimSpace(props)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(props, &top); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) && base >= 0 {
			// Offset counts the bytes read, the offending one included.
			return nil, fmt.Errorf("%s: invalid JSON at offset %d: %v", where, lead+int(se.Offset)-1, err)
		}
		return nil, fmt.Errorf("%s: want a JSON object of properties: %v", where, err)
	}
	shift := lead // offset in doc - shift = offset in the input
	var doc []byte
	if raw, ok := top["@class"]; ok {
		var c string
		if err := json.Unmarshal(raw, &c); err != nil || c == "" {
			return nil, fmt.Errorf(`%s: "@class" must be a class name`, where)
		}
		c = strings.TrimPrefix(c, `\`)
		if !classNameRE.MatchString(c) || !utf8.ValidString(c) {
			return nil, fmt.Errorf(`%s: "@class" %q is not a PHP class name`, where, c)
		}
		if class != "" && c != class {
			return nil, fmt.Errorf("%s describes a %s, not a %s", where, c, class)
		}
		doc = props
	} else {
		if class == "" {
			return nil, fmt.Errorf("give the job CLASS (or an \"@class\" in %s)", where)
		}
		// The object form keeps every name a property name (string keys, mangling as given).
		cj, _ := json.Marshal(class)
		var b bytes.Buffer
		b.WriteString(`{"@class":`)
		b.Write(cj)
		if body := props[1 : len(props)-1]; len(bytes.TrimSpace(body)) > 0 {
			b.WriteByte(',')
			shift = b.Len() - 1 - lead
			b.Write(body)
		}
		b.WriteByte('}')
		doc = b.Bytes()
	}
	v, err := phpser.UnmarshalReadable(doc)
	if err != nil {
		var se *phpser.SyntaxError
		if errors.As(err, &se) && base >= 0 {
			return nil, fmt.Errorf("%s: %s at offset %d", where, se.Msg, max(0, se.Offset-shift))
		}
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	if v.Kind() != phpser.KindObject {
		return nil, fmt.Errorf("%s: not an object", where)
	}
	return v, nil
}
