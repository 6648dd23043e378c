package laravel

import (
	"testing"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/failed/database"
)

// The failed_jobs table laraq creates on request is that of the application's release:
// the 13.9 stub indexes (connection, queue, failed_at) on string columns.
func TestFailedOptionsSchemaFollowsRelease(t *testing.T) {
	for _, c := range []struct {
		release laraq.Release
		want    database.Schema
	}{
		{laraq.Release{Major: 8, Minor: 83}, database.SchemaText},
		{laraq.Release{Major: 12, Minor: 67}, database.SchemaText},
		{laraq.Release{Major: 13, Minor: 8, Patch: 2}, database.SchemaText},
		{laraq.Release{Major: 13, Minor: 9}, database.SchemaIndexed},
		{majorRelease(13), database.SchemaIndexed},
	} {
		o := mustLoad(t, App{EnvFile: writeEnv(t, "QUEUE_FAILED_DRIVER=database-uuids\n"), Release: c.release}).FailedOptions()
		if o.Schema != c.want {
			t.Errorf("Laravel %s: Schema %s, want %s", c.release, o.Schema, c.want)
		}
	}
}
