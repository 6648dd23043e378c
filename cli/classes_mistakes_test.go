package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
)

// Go types written by hand for classes of the Laravel 13 manifest
// (testdata/phpclass/manifest-L13.json), each with one of the mistakes issue 20 lists,
// beside the right ones (propJobRight is in classes_test.go).

type nativeRight struct {
	A any    `php:"a,default=null"`
	B int    `php:"b,protected,default=2"`
	C string `php:"c,private,default=\"c\""`
}

func (nativeRight) PHPClass() string          { return `App\Jobs\Classes\NativeJob` }
func (nativeRight) PHPSerializesModels() bool { return false }

type encryptedRight struct {
	Card any `php:"card,default=null"`
	Cvc  any `php:"cvc,protected,default=null"`
	laraq.Queueable
}

func (encryptedRight) PHPClass() string   { return `App\Jobs\Classes\EncryptedJob` }
func (encryptedRight) ShouldBeEncrypted() {}

// misspeltProp: $orderId tagged "ordrId".
type misspeltProp struct {
	UniqueIDProp  any `php:"uniqueId,default=null"`
	UniqueForProp int `php:"uniqueFor,default=30"`
	OrderID       any `php:"ordrId,default=null"`
	laraq.Queueable
}

func (misspeltProp) PHPClass() string         { return `App\Jobs\Classes\UniquePropJob` }
func (misspeltProp) UniqueID() string         { return "" }
func (misspeltProp) UniqueFor() time.Duration { return 0 }

// missingProp: no field for $orderId.
type missingProp struct {
	UniqueIDProp  any `php:"uniqueId,default=null"`
	UniqueForProp int `php:"uniqueFor,default=30"`
	laraq.Queueable
}

func (missingProp) PHPClass() string         { return `App\Jobs\Classes\UniquePropJob` }
func (missingProp) UniqueID() string         { return "" }
func (missingProp) UniqueFor() time.Duration { return 0 }

// wrongDefault: $uniqueFor = 30 declared default=31.
type wrongDefault struct {
	UniqueIDProp  any `php:"uniqueId,default=null"`
	UniqueForProp int `php:"uniqueFor,default=31"`
	OrderID       any `php:"orderId,default=null"`
	laraq.Queueable
}

func (wrongDefault) PHPClass() string         { return `App\Jobs\Classes\UniquePropJob` }
func (wrongDefault) UniqueID() string         { return "" }
func (wrongDefault) UniqueFor() time.Duration { return 0 }

// wrongVisibility: the protected $b as a public field.
type wrongVisibility struct {
	A any    `php:"a,default=null"`
	B int    `php:"b,default=2"`
	C string `php:"c,private,default=\"c\""`
}

func (wrongVisibility) PHPClass() string          { return `App\Jobs\Classes\NativeJob` }
func (wrongVisibility) PHPSerializesModels() bool { return false }

// notUnique: UniquePropJob's fields, without saying ShouldBeUnique.
type notUnique struct {
	UniqueIDProp  any `php:"uniqueId,default=null"`
	UniqueForProp int `php:"uniqueFor,default=30"`
	OrderID       any `php:"orderId,default=null"`
	laraq.Queueable
}

func (notUnique) PHPClass() string { return `App\Jobs\Classes\UniquePropJob` }

// notEncrypted: EncryptedJob's fields, without saying ShouldBeEncrypted.
type notEncrypted struct {
	Card any `php:"card,default=null"`
	Cvc  any `php:"cvc,protected,default=null"`
	laraq.Queueable
}

func (notEncrypted) PHPClass() string { return `App\Jobs\Classes\EncryptedJob` }

// mistake is a Go type and what refusing it must say: the class, the property, the fix.
type mistake struct {
	name    string
	declare func(*laraq.Jobs)
	value   any // a value of the type, to dispatch
	want    []string
}

func mistakeOf[T laraq.Command](name string, want ...string) mistake {
	var zero T
	return mistake{name: name, declare: func(j *laraq.Jobs) { laraq.Declare[T](j) }, value: zero, want: want}
}

var mistakes = []mistake{
	mistakeOf[misspeltProp]("misspelt", `App\Jobs\Classes\UniquePropJob $ordrId (Go field OrderID): the class has no property $ordrId`,
		`App\Jobs\Classes\UniquePropJob $orderId: no field takes this public property`, "fix: add the field"),
	mistakeOf[missingProp]("missing", `App\Jobs\Classes\UniquePropJob $orderId: no field takes this public property`, "fix: add the field"),
	mistakeOf[propJobTypo]("case", `App\Jobs\Classes\UniquePropJob $orderId (Go field OrderID): the field's property $orderID differs from PHP's $orderId in case only`,
		"fix: tag it `php:\"orderId\"`"),
	mistakeOf[wrongDefault]("default", `App\Jobs\Classes\UniquePropJob $uniqueFor (Go field UniqueForProp): the field declares default=31, PHP's default is i:30;`,
		"fix: write default=30"),
	mistakeOf[wrongVisibility]("visibility", `App\Jobs\Classes\NativeJob $b (Go field B): the field is public, PHP's property is protected`,
		"fix: tag it `php:\"b,protected\"`"),
	mistakeOf[notUnique]("unique", `App\Jobs\Classes\UniquePropJob: the class implements ShouldBeUnique, the Go type does not say so`,
		"fix: add the methods UniqueID() string and UniqueFor() time.Duration"),
	mistakeOf[notEncrypted]("encrypted", `App\Jobs\Classes\EncryptedJob: the class implements ShouldBeEncrypted, the Go type does not say so`,
		"fix: add func (notEncrypted) ShouldBeEncrypted() {}"),
}

// TestHandWrittenMistakesStopWorkersAndDispatchers: with the classes' facts, each mistake
// issue 20 lists in a hand-written Go type stops a library worker (NewWorker) and a
// library dispatcher (NewDispatcher for the types it is given, Prepare for another) and
// `laraq work` (exit 1), before anything is queued or taken, with a message naming the
// class, the property and the fix; the right types pass all three.
func TestHandWrittenMistakesStopWorkersAndDispatchers(t *testing.T) {
	path, m := fixtureManifest(t)
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled: nothing gets that far
	defer client.Close()
	rel, err := laraq.ParseRelease("13.26")
	if err != nil {
		t.Fatal(err)
	}
	conn := &laraq.Connection{Client: client, Release: rel}
	cfg := laraq.WorkerConfig{Classes: m}

	right := laraq.NewJobs()
	laraq.Declare[propJobRight](right)
	laraq.Declare[nativeRight](right)
	laraq.Declare[encryptedRight](right)
	if _, err := laraq.NewWorker(conn, right, cfg); err != nil {
		t.Fatalf("NewWorker refuses the right types: %v", err)
	}
	d, err := laraq.NewDispatcher(conn, laraq.WithClasses(m, right))
	if err != nil {
		t.Fatalf("NewDispatcher refuses the right types: %v", err)
	}
	if _, err := d.Prepare(propJobRight{OrderID: 7}); err != nil {
		t.Fatalf("Prepare of a right type: %v", err)
	}

	for _, c := range mistakes {
		t.Run(c.name, func(t *testing.T) {
			says := func(who string, err error) {
				t.Helper()
				if err == nil {
					t.Errorf("%s takes the type", who)
					return
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%s: %v\nwant it to say %q", who, err, w)
					}
				}
			}
			jobs := laraq.NewJobs()
			c.declare(jobs)
			_, err := laraq.NewWorker(conn, jobs, cfg)
			says("NewWorker", err)
			_, err = laraq.NewDispatcher(conn, laraq.WithClasses(m, jobs))
			says("NewDispatcher", err)
			d, err := laraq.NewDispatcher(conn, laraq.WithClasses(m))
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Prepare(c.value)
			says("Prepare", err)
			_, err = d.Dispatch(context.Background(), c.value) // refused before Redis is asked
			says("Dispatch", err)

			var out, errOut bytes.Buffer
			rc := Main(context.Background(), []string{"work", "--classes", path, "--redis", "redis://127.0.0.1:1/0", "--database", "null",
				"--laravel-version", "13.26", "--stop-when-empty"}, WithJobs(jobs), WithIO(nil, &out, &errOut))
			if rc != 1 {
				t.Errorf("laraq work: exit %d, want 1:\n%s", rc, errOut.String())
			}
			for _, w := range c.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("laraq work said\n%s\nwant %q", errOut.String(), w)
				}
			}
		})
	}
}
