package laraq_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/phpser"
)

func TestChainContinuesOnlyAfterSuccess(t *testing.T) {
	for _, tc := range []struct {
		name      string
		ret       error
		continues bool
	}{
		{"success", nil, true},
		{"delete", laraq.Delete(), true}, // CallQueuedHandler checks only released and failed
		{"release", laraq.ReleaseAfter(time.Minute), false},
		{"fail", laraq.Fail(errors.New("no")), false},
		{"error on the last try", errors.New("boom"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := testkit.NewEnv(t)
			e.PushChain(testkit.WChainStep{Step: 2}, testkit.WChainStep{Step: 3})
			var steps []int
			reg := laraq.NewJobs()
			testkit.Register(reg, `App\Jobs\ChainStep`, func(ctx context.Context, cmd *testkit.WChainStep, job *laraq.JobInfo) error {
				steps = append(steps, cmd.Step)
				if cmd.Step == 1 {
					return tc.ret
				}
				if cmd.Step == 2 && (len(cmd.Chained) != 1 || !strings.Contains(cmd.Chained[0], `s:4:"step";i:3;`)) {
					t.Errorf("step 2 carries %q", cmd.Chained)
				}
				return nil
			})
			cfg := e.Config(reg)
			cfg.StopWhenEmpty = true
			e.RunToEnd(e.Consumer(cfg))
			want := []int{1}
			if tc.continues {
				want = []int{1, 2, 3}
			}
			if len(steps) != len(want) || (tc.continues && (steps[1] != 2 || steps[2] != 3)) {
				t.Errorf("ran steps %v, want %v", steps, want)
			}
		})
	}
}

func TestChainDispatchErrorIsTheJobsException(t *testing.T) {
	for _, tries := range []int{1, 2} {
		e := testkit.NewEnv(t)
		bad := phpser.NewObject(`App\Jobs\ChainStep`,
			phpser.PublicProp("step", phpser.Int(1)),
			phpser.PublicProp("chained", phpser.List(phpser.String("not serialized"))))
		p, err := testkit.NewDispatcher(e.Client, testkit.DispatchSetup{Prefix: e.Prefix})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Dispatch(e.Ctx, bad); err != nil {
			t.Fatal(err)
		}
		reg := laraq.NewJobs()
		reg.HandleFunc(`App\Jobs\ChainStep`, func(ctx context.Context, job *laraq.JobInfo) error { return nil })
		cfg := e.Config(reg)
		cfg.Tries = new(tries)
		cfg.MaxJobs = 1
		if err := e.RunToEnd(e.Consumer(cfg)); !errors.Is(err, laraq.ErrMaxJobs) {
			t.Fatal(err)
		}
		recs := e.Store.All()
		delayed := e.ZSet("queues:default:delayed")
		switch tries {
		case 1:
			if len(recs) != 1 || !strings.Contains(recs[0].Exception, `continuing the chain of App\Jobs\ChainStep: unserializing chained[0]: `) || len(delayed) != 0 {
				t.Errorf("tries 1: records %+v, delayed %v", recs, delayed)
			}
		case 2:
			// Like a handle() that threw: released for another try.
			if len(recs) != 0 || len(delayed) != 1 {
				t.Errorf("tries 2: records %+v, delayed %v", recs, delayed)
			}
		}
		if len(e.ZSet("queues:default:reserved")) != 0 {
			t.Error("job left reserved")
		}
	}
}

func TestChainToAnotherConnectionIsPushedHereWithAWarning(t *testing.T) {
	e := testkit.NewEnv(t)
	other := "redis-long"
	e.PushChain(testkit.WChainStep{Step: 2, Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Connection: &other}}})
	reg := laraq.NewJobs()
	var ran []string
	testkit.Register(reg, `App\Jobs\ChainStep`, func(ctx context.Context, cmd *testkit.WChainStep, job *laraq.JobInfo) error {
		c := ""
		if cmd.Connection != nil {
			c = *cmd.Connection
		}
		ran = append(ran, c)
		return nil
	})
	cfg := e.Config(reg)
	cfg.StopWhenEmpty = true
	e.RunToEnd(e.Consumer(cfg))
	if len(ran) != 2 || ran[1] != other {
		t.Errorf("ran with connections %q", ran)
	}
	if !strings.Contains(e.Logs.String(), "names another queue connection") {
		t.Errorf("no warning logged:\n%s", e.Logs.String())
	}
}
