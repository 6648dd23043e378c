package cli

import (
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// TestMain stops the shared redis-server and database servers after the tests.
func TestMain(m *testing.M) { testenv.Main(m) }
