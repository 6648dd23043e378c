package payload

import (
	"errors"
	"strings"
	"testing"
)

// fakeDecrypter opens the one envelope it knows.
type fakeDecrypter struct{ sealed, plain string }

func (f fakeDecrypter) DecryptCommand(s string) (string, error) {
	if s != f.sealed {
		return "", errors.New("encryption: The MAC is invalid.")
	}
	return f.plain, nil
}

func TestReadableDecryptsWithDecrypter(t *testing.T) {
	// base64 of {"iv":"a","value":"b","mac":"c","tag":""}
	sealed := "eyJpdiI6ImEiLCJ2YWx1ZSI6ImIiLCJtYWMiOiJjIiwidGFnIjoiIn0="
	in := []byte(`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\S","command":"` + sealed + `"}}`)
	d := fakeDecrypter{sealed: sealed, plain: `O:10:"App\Jobs\S":1:{s:6:"secret";s:2:"ok";}`}

	out, notes, err := Readable(in, WithDecrypter(d))
	if err != nil || !strings.Contains(string(out), `"secret": "ok"`) || len(notes) != 1 || !strings.Contains(notes[0], "shown decrypted") {
		t.Fatalf("with the decrypter: %v %q\n%s", err, notes, out)
	}
	out, notes, err = Readable(in)
	if err != nil || !strings.Contains(string(out), sealed) || len(notes) != 1 || !strings.Contains(notes[0], "shown as stored") {
		t.Fatalf("without: %v %q\n%s", err, notes, out)
	}
	if _, _, err := Readable(in, WithDecrypter(fakeDecrypter{sealed: "other"})); err == nil || !strings.Contains(err.Error(), "data.command: decrypting: encryption: The MAC is invalid.") {
		t.Fatalf("wrong key: %v", err)
	}
	// A plain command is never given to the decrypter.
	plain := []byte(`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"X","command":"O:1:\"X\":0:{}"}}`)
	if _, notes, err := Readable(plain, WithDecrypter(fakeDecrypter{})); err != nil || len(notes) != 0 {
		t.Fatalf("plain command: %v %q", err, notes)
	}
	// A bare JSON string holding the envelope.
	if out, _, err := Readable([]byte(`"`+sealed+`"`), WithDecrypter(d)); err != nil || !strings.Contains(string(out), `"secret": "ok"`) {
		t.Fatalf("bare string: %v %s", err, out)
	}
}
