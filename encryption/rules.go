package encryption

import (
	"fmt"
	"strconv"
	"strings"
)

// The payload format is the same from Laravel 8.56 to 13.x, but decrypt() has changed
// its checks five times (laravel/framework's history of Encryption/Encrypter.php):
//
//   - 8.83.5 / 9.5.0 (a5562634f0): a CBC payload with a non-empty tag is refused
//     ("Unable to use tag…"). Earlier releases let openssl_decrypt warn, which a
//     Laravel app turns into an ErrorException: refused either way, so laraq applies
//     the check to every release.
//   - 9.44.0 (28bd78682c): iv, value and mac must be strings and tag a string or null;
//     before, any non-null value passed and was coerced (or threw a TypeError).
//   - 11.0.0 (41d1f60152): APP_PREVIOUS_KEYS. The MAC may match any key, then every key
//     is tried to decrypt in order.
//   - 11.4.0 (8f42dc012a, #51063): the MAC check moves after the tag check, and keys
//     are tried in order: the first whose MAC matches is used to decrypt, and from
//     then on every later key is tried without a MAC check until one decrypts.
//   - 13.6.0 (e20a33055a, #59742): the MAC is computed with every key, and only the
//     first matching key decrypts.
//
// These differences show only on payloads with several faults (which message wins) or
// on payloads forged by someone who holds one of the keys; a payload Laravel wrote
// decrypts the same under every rule set. 11.0–11.3 are read with 11.4's key loop:
// their own loop decrypts a payload of a previous key with the current key first, and
// CBC "succeeds" with the wrong key about once in 256 tries, returning garbage where
// laraq returns the plaintext.

// rules are the decrypt() checks of one Laravel release.
type rules struct {
	// looseTypes: iv, value, mac and tag are not type-checked (before 9.44).
	looseTypes bool
	// macFirst: the CBC MAC is checked before the tag (before 11.4).
	macFirst bool
	// previousKeys: APP_PREVIOUS_KEYS exists (11.0+).
	previousKeys bool
	// macAllKeys: the MAC is checked with every key and only the first matching key
	// decrypts (13.6+); otherwise keys after the first matching one are tried too.
	macAllKeys bool
}

// version is a Laravel release; a bare major stands for its latest release.
type version struct{ major, minor, patch int }

const latestMinor = 1 << 30

func (v version) atLeast(major, minor, patch int) bool {
	if v.major != major {
		return v.major > major
	}
	if v.minor != minor {
		return v.minor > minor
	}
	return v.patch >= patch
}

// parseVersion reads "8", "8.x", "8.83", "12.51.0" or "v13.6"; "" is the newest release.
func parseVersion(s string) (version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if t == "" {
		return version{major: 1 << 30}, nil
	}
	t = strings.TrimSuffix(t, ".x")
	parts := strings.Split(t, ".")
	if len(parts) > 3 {
		return version{}, fmt.Errorf("encryption: Laravel version %q: want MAJOR[.MINOR[.PATCH]]", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return version{}, fmt.Errorf("encryption: Laravel version %q: %q is not a number", s, p)
		}
		n[i] = v
	}
	v := version{n[0], n[1], n[2]}
	if len(parts) == 1 {
		v.minor = latestMinor
	}
	if v.major < 8 {
		return version{}, fmt.Errorf("encryption: Laravel version %q: laraq supports Laravel 8 and later", s)
	}
	return v, nil
}

func (v version) rules() rules {
	return rules{
		looseTypes:   !v.atLeast(9, 44, 0),
		macFirst:     !v.atLeast(11, 4, 0),
		previousKeys: v.atLeast(11, 0, 0),
		macAllKeys:   v.atLeast(13, 6, 0),
	}
}
