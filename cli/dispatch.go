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
	"github.com/laraq/laraq/phpser"
)

func init() {
	register(&Command{Name: "dispatch", Summary: "queue a job for PHP (or Go) workers, as dispatch(new Job) does", Run: runDispatch})
}

const dispatchUsage = `dispatch [flags] CLASS

Queues a job of the PHP class CLASS with the properties given as JSON (--props), the
way Laravel's dispatch() queues the same object, and prints its job id.

The properties are a JSON object in the readable form 'laraq decode' prints:
{"podcastId": 5, "options": {"a": 1}, "when": {"@class": "Illuminate\\Support\\Carbon",
"date": "2024-01-01 00:00:00.000000", "timezone_type": 3, "timezone": "UTC"}, "status":
{"@enum": "App\\Enums\\Status:Active"}}. Numbers with a '.' or an exponent are floats
(1.0, -0.0, 1e100), others ints. A protected property is named "\u0000*\u0000name", a
private one "\u0000App\\Jobs\\Class\u0000name" (also inside nested objects); plain names
are public. Properties are written in the order given. A whole '{"@class": ...}'
object, or the full output of 'laraq decode', is accepted too (CLASS may then be left
out).

The properties InteractsWithQueue and Queueable add (job, connection, queue, ...,
chained) are appended with their defaults when none of them is given, as PHP puts
trait properties after the class' own; given ones keep their place and value and the
missing ones are filled in around them (--no-queueable adds nothing). As with
dispatch(): a queue property picks the Redis queue, a delay property sends the job to
:delayed, and the public tries, maxExceptions, backoff, timeout, failOnTimeout and
retryUntil properties become the payload's metadata. --queue and --delay work like
onQueue() and delay(): they set those properties, unless the given properties already
set them, and always decide where the job goes.`

func runDispatch(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("dispatch", dispatchUsage)
	af := addAppFlags(fs.FlagSet, false, false)
	addHorizonFlags(fs.FlagSet, false)
	propsFile := fs.String("props", "", "JSON `file` with the job's properties (- for stdin)")
	var delay string
	var delaySet bool
	fs.Var(stringFlag{&delay, &delaySet}, "delay", "delay the job by `SECONDS` (sets the delay property like ->delay())")
	noQueueable := fs.Bool("no-queueable", false, "do not add the InteractsWithQueue/Queueable properties")
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
	var delaySecs int64
	if delaySet {
		if delaySecs, err = strconv.ParseInt(delay, 10, 64); err != nil || delaySecs < 0 {
			return app.errorf("--delay %q: want a whole number of seconds, 0 or more", delay)
		}
	}

	var props []byte
	switch *propsFile {
	case "":
		props = []byte("{}")
	case "-":
		props, err = io.ReadAll(app.Stdin)
	default:
		props, err = os.ReadFile(*propsFile)
	}
	if err != nil {
		return app.errorf("--props: %v", err)
	}
	cmd, err := commandFromProps(class, props)
	if err != nil {
		return app.errorf("%v", err)
	}
	if !*noQueueable {
		cmd = phpser.NewObject(cmd.Class(), laraq.CompleteQueueable(cmd.Entries(), cfg.Release.QueueableProps())...)
	}

	var opts []laraq.DispatchOption
	if af.conn.queueSet {
		queues, err := af.queues()
		if err != nil {
			return app.errorf("%v", err)
		}
		if isSet(cmd, "queue") {
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
	conn, err := af.connect(ctx, cfg, laravel.ConnectOptions{WithoutFailedStore: true})
	if err != nil {
		return app.errorf("%v", err)
	}
	defer conn.Close()
	if *connection != "" {
		conn.Name = *connection
	}
	p, err := laraq.NewDispatcher(conn)
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

// commandFromProps builds the job object from the --props JSON: a properties object,
// a {"@class": ...} object, or a whole `laraq decode` document.
func commandFromProps(class string, props []byte) (*phpser.Value, error) {
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
		if errors.As(err, &se) {
			// Offset counts the bytes read, the offending one included.
			return nil, fmt.Errorf("--props: invalid JSON at offset %d: %v", lead+int(se.Offset)-1, err)
		}
		return nil, fmt.Errorf("--props: want a JSON object of properties: %v", err)
	}
	where := ""
	shift := lead // offset in doc - shift = offset in the --props input
	if data, ok := top["data"]; ok && top["job"] != nil {
		// `laraq decode` output: the command is data.command.
		var d map[string]json.RawMessage
		if err := json.Unmarshal(data, &d); err != nil || d["command"] == nil {
			return nil, errors.New("--props: a payload document needs data.command")
		}
		props = bytes.TrimSpace(d["command"])
		shift = 0
		where = "data.command: "
		top = nil
		if err := json.Unmarshal(props, &top); err != nil {
			return nil, errors.New("--props: data.command is not a readable object (was it decoded with 'laraq decode'?)")
		}
	}
	var doc []byte
	if raw, ok := top["@class"]; ok {
		var c string
		if err := json.Unmarshal(raw, &c); err != nil || c == "" {
			return nil, errors.New(`--props: "@class" must be a class name`)
		}
		c = strings.TrimPrefix(c, `\`)
		if !classNameRE.MatchString(c) || !utf8.ValidString(c) {
			return nil, fmt.Errorf(`--props: "@class" %q is not a PHP class name`, c)
		}
		if class != "" && c != class {
			return nil, fmt.Errorf("--props describes a %s, not a %s", c, class)
		}
		doc = props
	} else {
		if class == "" {
			return nil, errors.New("give the job CLASS (or an \"@class\" in --props)")
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
		if errors.As(err, &se) {
			return nil, fmt.Errorf("--props: %s%s at offset %d", where, se.Msg, max(0, se.Offset-shift))
		}
		return nil, fmt.Errorf("--props: %s%v", where, err)
	}
	if v.Kind() != phpser.KindObject {
		return nil, errors.New("--props: not an object")
	}
	return v, nil
}
