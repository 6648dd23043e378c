package laraq_test

import (
	"testing"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// TestFrameworkWrappersDisplayName: Laravel's own queued wrappers are named after what
// they carry (their displayName()), other classes after themselves.
func TestFrameworkWrappersDisplayName(t *testing.T) {
	srv := testenv.RedisServer(t)
	d, err := laraq.NewDispatcher(&laraq.Connection{Client: srv.Client(t, 0), Prefix: testenv.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	obj := func(class string, props ...phpser.Entry) *phpser.Value { return phpser.NewObject(class, props...) }
	for _, tc := range []struct {
		cmd  *phpser.Value
		want string
	}{
		{obj(`Illuminate\Events\CallQueuedListener`, phpser.PublicProp("class", phpser.String(`App\Listeners\L`))), `App\Listeners\L`},
		{obj(`Illuminate\Mail\SendQueuedMailable`, phpser.PublicProp("mailable", obj(`App\Mail\Welcome`))), `App\Mail\Welcome`},
		{obj(`Illuminate\Notifications\SendQueuedNotifications`, phpser.PublicProp("notification", obj(`App\Notifications\Paid`))), `App\Notifications\Paid`},
		{obj(`Illuminate\Broadcasting\BroadcastEvent`, phpser.PublicProp("event", obj(`App\Events\Moved`))), `App\Events\Moved`},
		{obj(`Illuminate\Events\CallQueuedListener`), `Illuminate\Events\CallQueuedListener`},
		{obj(`App\Jobs\Plain`, phpser.PublicProp("class", phpser.String("x"))), `App\Jobs\Plain`},
	} {
		m, err := d.Prepare(tc.cmd)
		if err != nil {
			t.Fatal(err)
		}
		env, err := payload.Parse(m.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if env.DisplayName != tc.want {
			t.Errorf("%s: displayName %q, want %q", tc.cmd.Class(), env.DisplayName, tc.want)
		}
	}
}
