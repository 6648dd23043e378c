package rdb

import (
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// normaliser makes the read-back of two runs comparable (testenv.HorizonNormaliser).
func (run *storyRun) normaliser() *testenv.HorizonNormaliser {
	return testenv.NewHorizonNormaliser(run.ids, run.driverID, run.php.HorizonPrefix, run.php.Prefix)
}

// assertSameJSON compares two normalised values and reports the paths that differ.
func assertSameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	testenv.AssertSameJSON(t, what, got, want)
}
