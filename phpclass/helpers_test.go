package phpclass_test

import (
	"testing"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpclass"
)

// fixture loads testdata/phpclass/manifest-NAME.json (TestExtractFacts -update writes it).
func fixture(t *testing.T, name string) *phpclass.Manifest {
	t.Helper()
	m, err := phpclass.Load(testenv.Testdata("phpclass", "manifest-"+name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}
