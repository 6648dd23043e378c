package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// PeerInfo is what testdata/php/peer_info.php reports after booting one release.
type PeerInfo struct {
	Major int    `json:"major"`
	Tag   string `json:"tag"` // "v8.83" (Debian's packages), "v5.8.38", "v10.50.3", "v12.67.0", ...
	PHP   string `json:"php"`
	// RedisPrefix is the connection's options.prefix as probed: "" (PHPEnv asks for none
	// when its Prefix is empty). CachePrefix is the cache store's key prefix of the
	// skeleton (LARAQ_CACHE_PREFIX unset) as RedisStore keeps it (5.8-10 append ':', 11+
	// do not).
	RedisPrefix string `json:"redis_prefix"`
	CachePrefix string `json:"cache_prefix"`
	// Components says which optional parts the release can queue with the installed
	// libraries: notifications, mail, broadcasting, context (11+), encrypted, unique and
	// batches (8+).
	Components map[string]bool `json:"components"`
}

type peerKey struct {
	major int
	tree  string
}

var (
	peerInfoMu sync.Mutex
	peerInfos  = map[peerKey]*peerProbe{}
)

type peerProbe struct {
	once sync.Once
	info PeerInfo
	err  error
}

// probePeer boots the release once per test binary (peer_info.php, no Redis needed).
func probePeer(major int, tree string) (PeerInfo, error) {
	if major == 0 {
		major = 8
	}
	peerInfoMu.Lock()
	p := peerInfos[peerKey{major, tree}]
	if p == nil {
		p = &peerProbe{}
		peerInfos[peerKey{major, tree}] = p
	}
	peerInfoMu.Unlock()
	p.once.Do(func() {
		if !knownMajor(major) {
			p.err = fmt.Errorf("no Laravel %d peer: the majors are %v", major, Majors)
			return
		}
		if _, err := exec.LookPath("php"); err != nil {
			p.err = fmt.Errorf("php not in PATH (scripts/install-peers.sh)")
			return
		}
		if major != 8 {
			if _, err := peersDir(); err != nil {
				p.err = err
				return
			}
		}
		cmd := PHPEnv{Major: major, Tree: tree}.Command("peer_info.php")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			p.err = fmt.Errorf("peer_info.php: %v: %s", err, bytes.TrimSpace(stderr.Bytes()))
			return
		}
		if err := json.Unmarshal(stdout.Bytes(), &p.info); err != nil {
			p.err = fmt.Errorf("peer_info.php printed %q: %v", stdout.Bytes(), err)
		}
	})
	return p.info, p.err
}

// NeedPeer makes sure the Laravel release of this major boots (php, the redis extension,
// Debian's packages for 8, the unpacked tree and harness for the others): a failure in
// CI, a skip elsewhere.
func NeedPeer(t testing.TB, major int) {
	t.Helper()
	if _, err := probePeer(major, ""); err != nil {
		Need(t, false, "Laravel %s: %v", MajorName(major), err)
	}
}

// NeedPeerTree is NeedPeer for another unpacked tree of a major (PHPEnv.Tree), e.g.
// NeedPeerTree(t, 13, "13.4").
func NeedPeerTree(t testing.TB, major int, tree string) {
	t.Helper()
	if _, err := probePeer(major, tree); err != nil {
		Need(t, false, "Laravel tree %s: %v", tree, err)
	}
}

// Peer returns what the release of this major booted as (its exact tag, its default
// prefixes, its optional components), after NeedPeer.
func Peer(t testing.TB, major int) PeerInfo {
	t.Helper()
	NeedPeer(t, major)
	info, _ := probePeer(major, "")
	return info
}

// MajorName is the name of a major in subtest names and fixture ids: "L8", "L10", ...
func MajorName(major int) string {
	if major == 0 {
		major = 8
	}
	return "L" + strconv.Itoa(major)
}

// ForEachMajor runs fn as a subtest per entry of Majors (named by MajorName), after
// NeedPeer. The subtests run in parallel with each other, so fn must keep to its own key
// prefix, queues and files (testenv.Prefix, t.TempDir); a test that cannot, loops over
// Majors itself.
func ForEachMajor(t *testing.T, fn func(t *testing.T, major int)) {
	t.Helper()
	for _, major := range Majors {
		t.Run(MajorName(major), func(t *testing.T) {
			t.Parallel()
			NeedPeer(t, major)
			fn(t, major)
		})
	}
}

// SkeletonRedisPrefix is the laravel/laravel skeleton's default connection prefix of a
// major (config/database.php: Str::slug(APP_NAME, '_').'_database_' up to 11,
// Str::slug(APP_NAME).'-database-' from 12), for APP_NAME "laravel".
func SkeletonRedisPrefix(major int) string {
	if major >= 12 {
		return "laravel-database-"
	}
	return "laravel_database_"
}

// selectMajors is all, or the majors of all that spec names: a comma list of majors and
// ranges ("8,10-13", "5-7"). A spec that does not parse, or names none of all, keeps
// every major (a typo must not quietly test less) and says so on stderr.
func selectMajors(spec string, all []int) []int {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return all
	}
	var out []int
	for _, part := range strings.Split(spec, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := a, error(nil)
		if isRange {
			b, err2 = strconv.Atoi(strings.TrimSpace(hi))
		}
		if err1 != nil || err2 != nil || b < a {
			fmt.Fprintf(os.Stderr, "testenv: LARAQ_MAJORS=%q: %q is not a major or a range; running every major %v\n", spec, part, all)
			return all
		}
		for _, m := range all {
			if m >= a && m <= b && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	if len(out) == 0 {
		fmt.Fprintf(os.Stderr, "testenv: LARAQ_MAJORS=%q names none of %v; running them all\n", spec, all)
		return all
	}
	slices.Sort(out)
	return out
}
