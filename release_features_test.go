package laraq_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/payload"
)

// flaggedJob has a public shouldBeEncrypted property, which Queue::jobShouldBeEncrypted
// reads from 8.19.
type flaggedJob struct {
	ShouldBeEncrypted bool   `php:"shouldBeEncrypted"`
	Note              string `php:"note"`
	laraq.Queueable
}

func (flaggedJob) PHPClass() string { return `App\Jobs\Flagged` }

// TestEncryptionNeeds819: before 8.19 no release encrypts a command or can decrypt one:
// a job that must be encrypted is refused, and a shouldBeEncrypted property is written
// in the clear as those releases write it; from 8.19 both are encrypted.
func TestEncryptionNeeds819(t *testing.T) {
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	for _, c := range []struct {
		release string
		encrypt bool
	}{{"5.8.38", false}, {"7.30.7", false}, {"8.18.0", false}, {"8.19.0", true}, {"13.26.1", true}} {
		rel := testkit.MustRelease(t, c.release)
		d, err := laraq.NewDispatcher(&laraq.Connection{Client: client, Release: rel, Encrypter: testkit.CaptureEncrypter(t)})
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Prepare(testkit.SecretJob{Secret: "s"})
		if c.encrypt != (err == nil) || !c.encrypt && !strings.Contains(err.Error(), "8.19") {
			t.Errorf("%s: a ShouldBeEncrypted job: %v", rel, err)
		}
		m, err := d.Prepare(flaggedJob{ShouldBeEncrypted: true, Note: "n"})
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		env, err := payload.Parse(m.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if encrypted := !strings.HasPrefix(env.Command, "O:"); encrypted != c.encrypt {
			t.Errorf("%s: shouldBeEncrypted = true written encrypted: %v, want %v", rel, encrypted, c.encrypt)
		}
	}
}

// uniqueOrder stands for a class implementing ShouldBeUnique.
type uniqueOrder struct {
	OrderID int `php:"orderId"`
	laraq.Queueable
}

func (uniqueOrder) PHPClass() string         { return `App\Jobs\UniqueOrder` }
func (u uniqueOrder) UniqueID() string       { return fmt.Sprint(u.OrderID) }
func (uniqueOrder) UniqueFor() time.Duration { return time.Minute }

// TestUniqueJobsNeed80: no release before 8.0 has ShouldBeUnique, so a UniqueJob is
// refused there (its workers would never release the lock) and nothing is locked or
// queued; from 8.0 it takes the lock.
func TestUniqueJobsNeed80(t *testing.T) {
	for _, c := range []struct {
		release string
		unique  bool
	}{{"5.8.38", false}, {"7.30.7", false}, {"8.0.0", true}, {"13.26.1", true}} {
		mr := miniredis.RunT(t)
		client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		rel := testkit.MustRelease(t, c.release)
		d, err := laraq.NewDispatcher(&laraq.Connection{Client: client, Release: rel})
		if err != nil {
			t.Fatal(err)
		}
		_, err = d.Dispatch(context.Background(), uniqueOrder{OrderID: 7})
		if c.unique != (err == nil) || !c.unique && !strings.Contains(err.Error(), "ShouldBeUnique is 8.x") {
			t.Errorf("%s: dispatching a UniqueJob: %v", rel, err)
		}
		if keys := mr.Keys(); c.unique != (len(keys) > 0) {
			t.Errorf("%s: keys after the dispatch: %v", rel, keys)
		}
	}
}
