package interop

import (
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
