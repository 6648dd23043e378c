package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/laraq/laraq/encryption"
	"github.com/laraq/laraq/laravel"
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
into an object being shown as {"@recursion": "FQCN"}.

An encrypted command (ShouldBeEncrypted) is shown as stored, unless the application
key is given: --app-key base64:..., or the APP_KEY (and APP_PREVIOUS_KEYS, app.cipher)
of --env-file or --laravel-root. It is then decrypted and shown readably; a command
that does not decrypt with that key is an error (Laravel's DecryptException message).

With --classes FILE (or LARAQ_CLASSES), a manifest 'laraq classes' wrote, a payload of
a class it describes gets a "class_facts" member after the envelope: every property
the class declares in serialize() order, with its visibility, declared type, the trait
it comes from and its default, and whether the command holds it, PHP left it out at its
default (Laravel 9.4+ SerializesModels) or it was never set (a typed property without
default); properties the command holds that the class does not declare are listed.`

func runDecode(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("decode", decodeUsage)
	appKey := fs.String("app-key", "", "the application `KEY` (APP_KEY, base64:...) to decrypt an encrypted command with")
	envFile := fs.String("env-file", "", "`PATH` of the application's .env, whose APP_KEY decrypts an encrypted command")
	root := fs.String("laravel-root", "", "the application `DIR`: its .env's APP_KEY and config/app.php's cipher")
	cf := addClassesFlag(fs)
	if rc := fs.Parse(args); rc >= 0 {
		return rc
	}
	classes, err := cf.load(app)
	if err != nil {
		return app.errorf("%v", err)
	}
	var opts []payload.ReadableOption
	var enc *encryption.Encrypter
	if *appKey != "" || *envFile != "" || *root != "" {
		if enc, err = decodeEncrypter(app, *appKey, *envFile, *root); err != nil {
			return app.errorf("%v", err)
		}
		opts = append(opts, payload.WithDecrypter(enc))
	}
	if fs.NArg() > 1 {
		return fs.Fail("takes one FILE, got %q", fs.Args())
	}
	var data []byte
	if fs.NArg() == 1 && fs.Arg(0) != "-" {
		data, err = os.ReadFile(fs.Arg(0))
	} else {
		data, err = io.ReadAll(app.Stdin)
	}
	if err != nil {
		return app.errorf("%v", err)
	}
	out, notes, err := payload.Readable(data, opts...)
	if err != nil {
		return app.errorf("%v", err)
	}
	if classes != nil {
		cmd, err := commandOf(data, enc)
		if err != nil {
			return app.errorf("%v", err)
		}
		facts, err := factsOf(classes, cmd)
		if err != nil {
			return app.errorf("%v", err)
		}
		if facts != nil {
			if out, err = withClassFacts(out, facts); err != nil {
				return app.errorf("%v", err)
			}
		} else if cmd != "" {
			notes = append(notes, "the manifest (--classes) does not describe the command's class")
		}
	}
	if _, err := app.Stdout.Write(out); err != nil {
		return app.errorf("%v", err)
	}
	for _, n := range notes {
		fmt.Fprintf(app.Stderr, "%s: %s\n", app.Name, n)
	}
	return 0
}

// decodeEncrypter is the application's Encrypter: --app-key wins over the APP_KEY of
// the .env file, as a flag wins everywhere.
func decodeEncrypter(app *App, key, envFile, root string) (*encryption.Encrypter, error) {
	flags := map[string]string{}
	if key != "" {
		flags["LARAQ_APP_KEY"] = key
	}
	cfg, err := laravel.Load(laravel.App{EnvFile: envFile, Root: root, Getenv: app.Getenv, Flags: flags})
	if err != nil {
		return nil, err
	}
	enc := cfg.Encryption.Encrypter()
	if enc == nil {
		for _, w := range cfg.Warnings {
			if strings.Contains(w, "APP_KEY") {
				return nil, errors.New(w)
			}
		}
		return nil, errors.New("no APP_KEY to decrypt with: give --app-key, or an application whose .env sets APP_KEY")
	}
	return enc, nil
}
