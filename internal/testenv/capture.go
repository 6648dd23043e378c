package testenv

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// CaptureNow is the clock every capture runs at (dispatch.php --now): 2026-01-01 00:00:00
// UTC, so :delayed scores, createdAt (12.11+) and retryUntil() dates are fixed.
const CaptureNow = 1767225600

// CaptureAppKey is the APP_KEY both bootstraps default to (LARAQ_APP_KEY); encrypted
// fixtures are encrypted with it.
const CaptureAppKey = "base64:bGFyYXEtcGVlci10ZXN0LWtleS0zMi1ieXRlcyEhISE="

// CaptureSpec is one shape of testdata/laravel-payloads/capture/shapes.json: the dispatch.php
// request whose payload is kept as L<major>-<shape>.json for each of Majors.
type CaptureSpec struct {
	Shape    string          `json:"shape"`
	Majors   []int           `json:"majors"`
	Kind     string          `json:"kind"`     // the README's description
	Request  json.RawMessage `json:"request"`  // one dispatch.php request
	Reserved bool            `json:"reserved"` // also keep the reserved copy as <id>-r
	Dir      string          `json:"dir"`      // a subdirectory, for payloads laraq cannot read
}

// ID is the fixture id of the shape on a major: "L12-models".
func (s CaptureSpec) ID(major int) string { return MajorName(major) + "-" + s.Shape }

// CaptureSpecs reads testdata/laravel-payloads/capture/shapes.json.
func CaptureSpecs(t testing.TB) []CaptureSpec {
	t.Helper()
	b, err := os.ReadFile(Testdata("laravel-payloads", "capture", "shapes.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Shapes []CaptureSpec }
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("shapes.json: %v", err)
	}
	return f.Shapes
}

// Captured is one captured fixture: its id, the file it belongs in (relative to
// testdata/laravel-payloads) and the exact bytes.
type Captured struct {
	ID, File string
	Bytes    []byte
}

// CapturePayloads dispatches every shapes.json shape of this major on the real release
// (one dispatch.php run, clock CaptureNow, uuids (6.x+) and — on 10+ — job ids seeded per major)
// and, for the shapes marked reserved, reserves each payload again with the release's own
// pop script (queue_op.php pop-script on a queue of its own). On 10-13 the result is
// byte-for-byte repeatable except for encrypted commands (a random IV); before 10 the job
// id is random too, on 5.8 the uuids as well. NormalizeCapture removes exactly those
// differences.
func CapturePayloads(t testing.TB, srv *Redis, major int) []Captured {
	t.Helper()
	php := PHPEnv{Major: major, Redis: srv, Prefix: Prefix(t), FailedDB: SQLite(t)}
	var specs []CaptureSpec
	var requests []string
	for _, s := range CaptureSpecs(t) {
		if slices.Contains(s.Majors, major) {
			var req bytes.Buffer
			if err := json.Compact(&req, s.Request); err != nil {
				t.Fatalf("shapes.json %s: %v", s.Shape, err)
			}
			specs = append(specs, s)
			requests = append(requests, req.String())
		}
	}
	args := []string{"--now=" + strconv.Itoa(CaptureNow), "--seed=laraq-" + MajorName(major)}
	lines := php.Dispatch(t, args, requests...)
	var out []Captured
	for i, s := range specs {
		d := lines[i]
		if d.Payload == "" {
			t.Fatalf("%s: dispatch.php queued nothing: %+v", s.ID(major), d)
		}
		file := s.ID(major) + ".json"
		if s.Dir != "" {
			file = filepath.Join(s.Dir, file)
		}
		out = append(out, Captured{s.ID(major), file, []byte(d.Payload)})
		if !s.Reserved {
			continue
		}
		queue := "capture-" + s.Shape
		php.Run(t, []byte(d.Payload), "queue_op.php", "--queue="+queue, "push")
		var popped struct{ Reserved string }
		if err := json.Unmarshal(php.Run(t, nil, "queue_op.php", "--queue="+queue, "--now="+strconv.Itoa(CaptureNow), "pop-script"), &popped); err != nil {
			t.Fatal(err)
		}
		r, err := base64.StdEncoding.DecodeString(popped.Reserved)
		if err != nil || len(r) == 0 {
			t.Fatalf("%s: pop-script reserved %q: %v", s.ID(major), popped.Reserved, err)
		}
		out = append(out, Captured{s.ID(major) + "-r", filepath.Join(s.Dir, s.ID(major)+"-r.json"), r})
	}
	return out
}

var (
	jsonUUID = regexp.MustCompile(`"uuid":"[0-9a-f-]{36}"`)
	jsonID   = regexp.MustCompile(`"id":"[A-Za-z0-9]{32}"`)
	jsonCmd  = regexp.MustCompile(`"command":"(eyJ[A-Za-z0-9+/=\\]*)"`)
	anyUUID  = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
)

// NormalizeCapture makes two captures of one shape comparable: an encrypted data.command
// is replaced by its plaintext (decrypted with CaptureAppKey); before 10.x, which has no
// hook to seed Str::random(), the envelope's 32-character job id by a placeholder; on
// 8.83 the envelope's uuid too (as its committed L8 fixtures were always compared), and
// on 5.8, which has no Str::createUuidsUsing and no envelope uuid, every uuid wherever it
// is (a notification's id). An
// encrypted command that does not decrypt is left as it is, so the comparison fails.
func NormalizeCapture(major int, b []byte) []byte {
	if major == 0 {
		major = 8
	}
	b = jsonCmd.ReplaceAllFunc(b, func(m []byte) []byte {
		enc := jsonCmd.FindSubmatch(m)[1]
		plain, err := DecryptLaravel(CaptureAppKey, string(bytes.ReplaceAll(enc, []byte(`\/`), []byte("/"))))
		if err != nil {
			return m
		}
		q, _ := json.Marshal("decrypted:" + plain)
		return append([]byte(`"command":`), q...)
	})
	if major < 10 {
		b = jsonID.ReplaceAll(b, []byte(`"id":"<id>"`))
	}
	switch major {
	case 8:
		b = jsonUUID.ReplaceAll(b, []byte(`"uuid":"<uuid>"`))
	case 5:
		b = anyUUID.ReplaceAll(b, []byte(`<uuid>`))
	}
	return b
}

// DecryptLaravel decrypts what Illuminate\Encryption\Encrypter::encrypt wrote with the
// AES-256-CBC key appKey ("base64:..."): base64 of {"iv","value","mac","tag"}, the mac an
// HMAC-SHA256 of iv.value. The plaintext is returned as PHP serialized it (s:N:"...";).
func DecryptLaravel(appKey, payload string) (string, error) {
	key, err := base64.StdEncoding.DecodeString(appKey[len("base64:"):])
	if err != nil || len(key) != 32 {
		return "", fmt.Errorf("app key: want base64 of 32 bytes")
	}
	raw, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return "", fmt.Errorf("payload: %w", err)
	}
	var p struct{ IV, Value, MAC string }
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", fmt.Errorf("payload: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(p.IV + p.Value))
	if want, err := hex.DecodeString(p.MAC); err != nil || !hmac.Equal(mac.Sum(nil), want) {
		return "", errors.New("the MAC is invalid")
	}
	iv, err1 := base64.StdEncoding.DecodeString(p.IV)
	ct, err2 := base64.StdEncoding.DecodeString(p.Value)
	if err1 != nil || err2 != nil || len(iv) != aes.BlockSize || len(ct) == 0 || len(ct)%aes.BlockSize != 0 {
		return "", errors.New("iv or value malformed")
	}
	block, _ := aes.NewCipher(key)
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(ct, ct)
	pad := int(ct[len(ct)-1])
	if pad == 0 || pad > aes.BlockSize || pad > len(ct) {
		return "", errors.New("bad padding")
	}
	return string(ct[:len(ct)-pad]), nil
}
