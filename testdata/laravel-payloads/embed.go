// Package laravelpayloads holds real Laravel queue payloads for tests and the demo: the
// public samples S1–S12, jobs captured from the Laravel 8.83 peer (queued and reserved
// copies) and payloads of later releases built from the wire spec. README.md lists each
// one with its version, kind and source.
//
// The files are the bytes a queue stored, without a trailing newline. FS embeds them so
// that programs outside this directory (`laraq demo`) can use them without copies.
package laravelpayloads

import (
	"embed"
	"io/fs"
	"path"
	"strings"
)

// FS holds every payload file and README.md.
//
//go:embed README.md *.json *.txt
var FS embed.FS

// Read returns the payload with this id (its file name without extension).
func Read(id string) ([]byte, error) {
	for _, ext := range []string{".json", ".txt"} {
		if b, err := FS.ReadFile(id + ext); err == nil {
			return b, nil
		}
	}
	return nil, &fs.PathError{Op: "read", Path: id, Err: fs.ErrNotExist}
}

// IDs lists the payload ids in file-name order.
func IDs() []string {
	entries, _ := FS.ReadDir(".")
	var ids []string
	for _, e := range entries {
		name := e.Name()
		if ext := path.Ext(name); ext == ".json" || ext == ".txt" {
			ids = append(ids, strings.TrimSuffix(name, ext))
		}
	}
	return ids
}
