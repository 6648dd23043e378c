package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPeersDirHoldsEveryTree(t *testing.T) {
	dir := PeersDir(t)
	for _, tree := range []string{"laravel-10", "laravel-11", "laravel-12", "laravel-13", "laravel-13.4"} {
		if _, err := os.Stat(filepath.Join(dir, tree, "Illuminate", "Queue", "Worker.php")); err != nil {
			t.Errorf("%s: %v", tree, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "horizon", "src", "Repositories", "RedisJobRepository.php")); err != nil {
		t.Errorf("horizon: %v", err)
	}
}
