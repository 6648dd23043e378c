package cli

import (
	"fmt"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

func intp(n int) *int { return &n }

// TestHorizonWorkMatchesPHPWorker runs one story twice per Horizon peer: jobs dispatched
// through Horizon's PHP queue — completing, released and retried, throwing then
// succeeding, failing, silenced by config and by the Silenced contract, tagged, on a
// monitored tag — worked by Horizon's PHP worker path in the first run and by
// `laraq work --laravel-root` in the second, with dashboard retries of failed jobs in
// between. Read back through Horizon's repositories and controllers (records, lists,
// counts, tags, metrics and their snapshots, workload, stats) and in the raw keys, the
// two runs must be the same.
func TestHorizonWorkMatchesPHPWorker(t *testing.T) {
	monitor := []string{"laraq", `Laraq\HorizonTest\User:1`}
	tags := []string{"laraq", "region:eu/west", `Laraq\HorizonTest\User:1`, `Laraq\HorizonTest\User:2`, `Laraq\HorizonTest\User:3`}
	steps := []hzStoryStep{
		{dispatch: []hzJob{
			{Plan: []string{"ok"}, User: intp(1), Users: []int{1, 2}},       // J1 monitored via User:1
			{Plan: []string{"release", "ok"}},                               // J2 released, migrated, completed
			{Plan: []string{"throw-unless-retry"}, Tries: 1, User: intp(3)}, // J3 fails; its retries complete
			{Plan: []string{"throw", "ok"}, Tries: 2},                       // J4 exception, released, completed
			{Kind: "quiet"},  // J5 silenced by horizon.silenced
			{Kind: "marked"}, // J6 silenced by the Silenced contract
			{Kind: "tagged"}, // J7 explicit tags, "laraq" monitored
			{Kind: "tagged", Plan: []string{"throw"}, Tries: 1}, // J8 fails with tags
		}},
		{work: true},
		{retry: "J3"}, // J9 completes: J3's retried_by entry becomes completed
		{retry: "J8"}, // J10 fails again: J8's entry becomes failed
		{work: true},
		{retry: "J3"}, // J11: a second entry on J3
		{work: true},
	}
	silenced := []string{`Laraq\HorizonTest\QuietStep`}
	for _, major := range testenv.HorizonMajors {
		t.Run(fmt.Sprintf("laravel-%d", major), func(t *testing.T) {
			php := newHzApp(t, major, silenced)
			php.play(t, monitor, steps, nil)
			phpRaw, phpDash := php.readBack(t, tags)

			gow := newHzApp(t, major, silenced)
			gow.play(t, monitor, steps, hzSteps())
			goRaw, goDash := gow.readBack(t, tags)

			testenv.AssertSameJSON(t, "raw keys", goRaw, phpRaw)
			testenv.AssertSameJSON(t, "dashboard", goDash, phpDash)
			gow.assertFailedTexts(t, 3)

			// The story did what it claims, in both runs.
			counts := goDash["counts"].(map[string]any)
			for k, want := range map[string]string{"completed": "6", "silenced": "2", "failed": "3", "recent": "11", "recent_failed": "3"} {
				if got := fmt.Sprint(counts[k]); got != want {
					t.Errorf("count %s = %s, want %s", k, got, want)
				}
			}
			rec := goDash["records"].(map[string]any)
			for tok, want := range map[string]string{"J3": "status:completed", "J8": "status:failed"} {
				if rb := fmt.Sprint(rec[tok].(map[string]any)["retried_by"]); !strings.Contains(rb, want) {
					t.Errorf("%s retried_by %s, want %s", tok, rb, want)
				}
			}
			jobs := goDash["metrics"].(map[string]any)["jobs"].(map[string]any)
			if tp := fmt.Sprint(jobs[`Laraq\HorizonTest\Step`].(map[string]any)["throughput"]); tp != "5" {
				t.Errorf("Step throughput %s, want 5: %v", tp, jobs)
			}
		})
	}
}
