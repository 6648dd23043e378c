package cli

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/laraq/laraq/payload"
)

func init() {
	register(&Command{Name: "decode", Summary: "print a job payload with its PHP command readable", Run: runDecode})
}

const decodeUsage = `decode [FILE]

Reads a Laravel queue payload (the JSON stored in Redis, the queued or the reserved
copy) from FILE or stdin and prints it as indented JSON with data.command, the
PHP-serialized job, shown readably: objects as {"@class": "FQCN", "prop": ...} with
visibility prefixes stripped, lists as JSON arrays, enums as {"@enum": "Class:Case"}.
Everything else in the envelope, including the data of a Class@method job, is
printed as it is, in the same order. A bare serialized value (or a JSON string
holding one) is accepted too. Strings that are not UTF-8 are shown as
{"@binary": "<base64>"}, references as the value they point to, and a reference back
into an object being shown as {"@recursion": "FQCN"}.`

func runDecode(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("decode", decodeUsage)
	if rc := fs.Parse(args); rc >= 0 {
		return rc
	}
	if fs.NArg() > 1 {
		return fs.Fail("takes one FILE, got %q", fs.Args())
	}
	var (
		data []byte
		err  error
	)
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		data, err = os.ReadFile(fs.Arg(0))
	} else {
		data, err = io.ReadAll(app.Stdin)
	}
	if err != nil {
		return app.errorf("%v", err)
	}
	out, notes, err := payload.Readable(data)
	if err != nil {
		return app.errorf("%v", err)
	}
	if _, err := app.Stdout.Write(out); err != nil {
		return app.errorf("%v", err)
	}
	for _, n := range notes {
		fmt.Fprintf(app.Stderr, "%s: %s\n", app.Name, n)
	}
	return 0
}
