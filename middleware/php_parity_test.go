package middleware_test

import (
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// TestParityWithPHP: for every scenario of every release that ships its middleware, the
// attempt in Go (the middleware declared in Go; and, for objects PHP can serialize, the
// Go forms decoded from ->through()'s payload) leaves the same outcome and the same Redis
// and database state as the attempt in PHP.
func TestParityWithPHP(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		testenv.Since(t, major, testenv.JobMiddleware)
		rel := releaseOf(t, major)
		ran := 0
		for _, sc := range scenarios() {
			if sc.ships != nil && !sc.ships(rel) {
				continue
			}
			ran++
			t.Run(sc.name, func(t *testing.T) {
				php, phpState := attempt(t, func() (outcome, map[string]string) {
					s := newSide(t, sc.database)
					o := runPHP(t, srv, major, sc, s, false)
					return o, dumpSide(t, srv, s, o.Before)
				})
				want := sc.want
				if sc.wantFor != nil {
					want = sc.wantFor(rel)
				}
				if !strings.Contains(php.String(), want) {
					t.Fatalf("PHP's attempt: %s; the scenario wants %q", php, want)
				}
				goOut, goState := attempt(t, func() (outcome, map[string]string) {
					s := newSide(t, sc.database)
					o := runGo(t, srv, major, sc, s, sc.goMW)
					return o, dumpSide(t, srv, s, o.Before)
				})
				compare(t, "Go", php, phpState, goOut, goState)
				if !sc.decoded {
					return
				}
				command := serializedPHP(t, major, sc)
				php, phpState = attempt(t, func() (outcome, map[string]string) {
					s := newSide(t, sc.database)
					o := runPHP(t, srv, major, sc, s, true)
					return o, dumpSide(t, srv, s, o.Before)
				})
				goOut, goState = attempt(t, func() (outcome, map[string]string) {
					s := newSide(t, sc.database)
					o := runGoDecoded(t, srv, major, sc, s, command)
					return o, dumpSide(t, srv, s, o.Before)
				})
				compare(t, "Go decoded from ->through()", php, phpState, goOut, goState)
			})
		}
		if ran == 0 {
			t.Fatal("no scenario ships on this release")
		}
	})
}

func compare(t *testing.T, what string, php outcome, phpState map[string]string, goOut outcome, goState map[string]string) {
	t.Helper()
	if php.String() != goOut.String() {
		t.Errorf("%s: outcome\n  PHP: %s\n   Go: %s", what, php, goOut)
	}
	if !sameDump(phpState, goState) {
		t.Errorf("%s: state\n  PHP: %s\n   Go: %s", what, showDump(phpState), showDump(goState))
	}
}
