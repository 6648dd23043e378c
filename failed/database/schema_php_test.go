package database

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// schemaRelease is one Laravel tree whose queue:failed-table stub the schema test runs.
type schemaRelease struct {
	major int
	tree  string // PHPEnv.Tree: "" for the major's peer, "13.4" for 13.4.0
}

func (r schemaRelease) String() string {
	if r.tree != "" {
		return "L" + r.tree
	}
	return testenv.MajorName(r.major)
}

// release returns the tree's major and minor: the peer's tag, or the tree's name.
func (r schemaRelease) release(t *testing.T) (major, minor int) {
	t.Helper()
	tag := r.tree
	if tag == "" {
		tag = testenv.Peer(t, r.major).Tag
	}
	if _, err := fmt.Sscanf(strings.TrimPrefix(tag, "v"), "%d.%d", &major, &minor); err != nil {
		t.Fatalf("release of %s: %q: %v", r, tag, err)
	}
	return major, minor
}

// The releases with a uuid column (database-uuids, 8.0+), whose stubs differ around
// 13.9: 13.4.0 still has the 8.0 stub, 13.26.1 the indexed one.
var schemaReleases = []schemaRelease{{8, ""}, {9, ""}, {10, ""}, {11, ""}, {12, ""}, {13, "13.4"}, {13, ""}}

// TestSchemaMatchesLaravelMigration: on each database, the table Open creates with the
// release's Schema is the table that release's own queue:failed-table stub creates when
// `php artisan migrate` runs it (failed_op.php migrate), as the database reports both.
func TestSchemaMatchesLaravelMigration(t *testing.T) {
	for _, rel := range schemaReleases {
		t.Run(rel.String(), func(t *testing.T) {
			if rel.tree != "" {
				testenv.NeedPeerTree(t, rel.major, rel.tree)
			} else {
				testenv.NeedPeer(t, rel.major)
			}
			major, minor := rel.release(t)
			schema := SchemaFor(major, minor)
			forEachBackend(t, func(t *testing.T, b backend) {
				ctx := ctxT(t)
				other := newBackend(t, b.name)
				php := newPHP(t, other, nil)
				php.env.Major, php.env.Tree = rel.major, rel.tree
				php.run(t, nil, "migrate")
				goStore := mustOpen(t, b.dsn, Options{CreateTable: CreateIfMissing, Schema: schema})
				phpStore := mustOpen(t, other.dsn, Options{CreateTable: CreateNever})
				goSchema := describeTable(t, ctx, goStore.(*sqlStore))
				phpSchema := describeTable(t, ctx, phpStore.(*sqlStore))
				if !slices.Equal(goSchema, phpSchema) || len(goSchema) < 7 {
					t.Fatalf("%s (%s): schema differs:\n  Go:      %q\n  Laravel: %q", rel, schema, goSchema, phpSchema)
				}
				indexed := slices.ContainsFunc(phpSchema, func(l string) bool { return strings.Contains(l, "connection_queue_failed_at_index") })
				if indexed != (schema == SchemaIndexed) {
					t.Fatalf("%s: SchemaFor(%d, %d) = %s, but the stub's table %s the index: %q", rel, major, minor, schema,
						map[bool]string{true: "has", false: "lacks"}[indexed], phpSchema)
				}
			})
		})
	}
}

// The legacy driver's table (the 5.5–7.x stub, no uuid) is the same whatever the Schema,
// and it is the table the queue:failed-table stub of 5.8, 6.x and 7.x creates (the
// harness's hand-written copy of it on 8.83 too).
func TestLegacySchemaMatchesLaravelMigration(t *testing.T) {
	for _, major := range []int{5, 6, 7, 8} {
		for _, schema := range []Schema{SchemaText, SchemaIndexed} {
			t.Run(fmt.Sprintf("%s/%s", testenv.MajorName(major), schema), func(t *testing.T) {
				testenv.NeedPeer(t, major)
				testLegacySchema(t, major, schema)
			})
		}
	}
}

func testLegacySchema(t *testing.T, major int, schema Schema) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		other := newBackend(t, b.name)
		php := newPHP(t, other, map[string]string{"LARAQ_FAILED_DRIVER": "database"})
		php.env.Major = major
		php.run(t, nil, "migrate")
		goStore := mustOpen(t, b.dsn, Options{Driver: Database, CreateTable: CreateIfMissing, Schema: schema})
		phpStore := mustOpen(t, other.dsn, Options{Driver: Database, CreateTable: CreateNever})
		goSchema := describeTable(t, ctx, goStore.(*sqlStore))
		phpSchema := describeTable(t, ctx, phpStore.(*sqlStore))
		if !slices.Equal(goSchema, phpSchema) || len(goSchema) < 6 {
			t.Fatalf("schema differs:\n  Go:      %q\n  Laravel: %q", goSchema, phpSchema)
		}
	})
}

func TestSchemaFor(t *testing.T) {
	for _, c := range []struct {
		major, minor int
		want         Schema
	}{{8, 83, SchemaText}, {11, 56, SchemaText}, {12, 47, SchemaText}, {12, 67, SchemaText}, {13, 4, SchemaText},
		{13, 8, SchemaText}, {13, 9, SchemaIndexed}, {13, 26, SchemaIndexed}, {14, 0, SchemaIndexed}, {0, 0, SchemaIndexed}} {
		if got := SchemaFor(c.major, c.minor); got != c.want {
			t.Errorf("SchemaFor(%d, %d) = %s, want %s", c.major, c.minor, got, c.want)
		}
	}
}

// TestRowsInEachStubTable: in the table of each 13.x stub (the text columns of 13.4.0,
// the indexed string columns of 13.26.1), on every database, rows Go writes are what that
// release's provider lists and finds, and a row the provider writes is what Go reads.
func TestRowsInEachStubTable(t *testing.T) {
	for _, rel := range []schemaRelease{{13, "13.4"}, {13, ""}} {
		t.Run(rel.String(), func(t *testing.T) {
			if rel.tree != "" {
				testenv.NeedPeerTree(t, rel.major, rel.tree)
			} else {
				testenv.NeedPeer(t, rel.major)
			}
			forEachBackend(t, func(t *testing.T, b backend) {
				ctx := ctxT(t)
				php := newPHP(t, b, nil)
				php.env.Major, php.env.Tree = rel.major, rel.tree
				php.run(t, nil, "migrate")
				s := mustOpen(t, b.dsn, Options{CreateTable: CreateNever})
				exc := goException(1)
				id, err := s.Log(ctx, "redis", "emails", []byte(samplePayloads[2]), exc)
				if err != nil {
					t.Fatal(err)
				}
				rows := php.list(t)
				if len(rows) != 1 || anyText(rows[0].ID) != id || rows[0].Connection != "redis" || rows[0].Queue != "emails" ||
					!bytes.Equal(rows[0].Payload, []byte(samplePayloads[2])) || string(rows[0].Exception) != exc {
					t.Fatalf("%s lists %+v", rel, rows)
				}
				if row := php.find(t, id); row == nil || anyText(row.ID) != id {
					t.Fatalf("%s find(%s) = %+v", rel, id, row)
				}
				phpID, phpExc := php.log(t, "redis", "default", []byte(samplePayloads[3]), "")
				r, err := s.Find(ctx, phpID)
				if err != nil || r == nil || r.Queue != "default" || r.Connection != "redis" || r.Exception != phpExc ||
					!bytes.Equal(r.Payload, []byte(samplePayloads[3])) {
					t.Fatalf("Go reads %+v, %v", r, err)
				}
			})
		})
	}
}
