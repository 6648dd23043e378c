package laravel

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/secret"
)

// Redis is one Redis connection of the application (config/database.php `redis.default`
// or `redis.cache`), or a Sentinel or Cluster deployment given through LARAQ_REDIS_SENTINEL
// / LARAQ_REDIS_CLUSTER.
type Redis struct {
	// Addrs are host:port pairs: the server; the Sentinels when SentinelMaster is set; the
	// seed nodes when Cluster is set.
	Addrs []string
	// Username is the ACL user (REDIS_USERNAME, Redis 6+). Default "" (the default user).
	Username string
	// Password is REDIS_PASSWORD. Secret. Default "" (no AUTH).
	Password string
	// DB is the database number (SELECT), REDIS_DB or REDIS_CACHE_DB. Not used on a Cluster.
	DB int
	// TLS connects with TLS (rediss:// or tls:// URLs, a tls:// host, LARAQ_REDIS_TLS).
	TLS bool
	// TLSCAFile is a PEM file of CAs to trust instead of the system's (LARAQ_REDIS_TLS_CA).
	TLSCAFile string
	// TLSInsecure skips certificate verification (LARAQ_REDIS_TLS_INSECURE). Tests only.
	TLSInsecure bool
	// TLSServerName is the name the certificate must carry; default: the host of Addrs[0].
	TLSServerName string
	// SentinelMaster is the master set's name when Addrs are Sentinels.
	SentinelMaster string
	// SentinelUsername and SentinelPassword authenticate to the Sentinels (secret).
	SentinelUsername string
	SentinelPassword string
	// Cluster says Addrs are Redis Cluster nodes.
	Cluster bool
}

// String shows the connection as a URL with the password replaced by "xxxxx".
func (r Redis) String() string {
	scheme := "redis"
	if r.TLS {
		scheme = "rediss"
	}
	user := ""
	switch {
	case r.Username != "" && r.Password != "":
		user = url.User(r.Username).String() + ":" + redacted + "@"
	case r.Password != "":
		user = ":" + redacted + "@"
	case r.Username != "":
		user = url.User(r.Username).String() + "@"
	}
	s := fmt.Sprintf("%s://%s%s/%d", scheme, user, strings.Join(r.Addrs, ","), r.DB)
	if len(r.Addrs) == 1 && strings.HasPrefix(r.Addrs[0], "/") {
		s = fmt.Sprintf("unix://%s%s?db=%d", user, r.Addrs[0], r.DB)
	}
	switch {
	case r.SentinelMaster != "":
		s += " (sentinel master " + r.SentinelMaster + ")"
	case r.Cluster:
		s = fmt.Sprintf("%s://%s%s (cluster)", scheme, user, strings.Join(r.Addrs, ","))
	}
	return s
}

// UniversalOptions returns go-redis options for this connection: a plain client,
// a Sentinel failover client or a Cluster client as redis.NewUniversalClient decides
// from them.
func (r Redis) UniversalOptions() (*redis.UniversalOptions, error) {
	if len(r.Addrs) == 0 {
		return nil, errors.New("config: Redis connection without an address")
	}
	o := &redis.UniversalOptions{
		Addrs:            r.Addrs,
		Username:         r.Username,
		Password:         r.Password,
		DB:               r.DB,
		MasterName:       r.SentinelMaster,
		SentinelUsername: r.SentinelUsername,
		SentinelPassword: r.SentinelPassword,
		IsClusterMode:    r.Cluster,
	}
	if r.Cluster {
		o.DB = 0
	}
	if r.TLS {
		tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: r.TLSServerName, InsecureSkipVerify: r.TLSInsecure}
		if tc.ServerName == "" {
			if host, _, err := net.SplitHostPort(r.Addrs[0]); err == nil {
				tc.ServerName = host
			}
		}
		if r.TLSCAFile != "" {
			pem, err := os.ReadFile(r.TLSCAFile)
			if err != nil {
				return nil, fmt.Errorf("config: Redis TLS CA: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("config: Redis TLS CA %s: no PEM certificate in it", r.TLSCAFile)
			}
			tc.RootCAs = pool
		}
		o.TLSConfig = tc
	}
	return o, nil
}

// same reports whether both connections reach the same database with the same
// credentials, so one client serves both.
func (r Redis) same(o Redis) bool {
	return strings.Join(r.Addrs, ",") == strings.Join(o.Addrs, ",") && r.Username == o.Username &&
		r.Password == o.Password && (r.DB == o.DB || r.Cluster) && r.TLS == o.TLS &&
		r.TLSCAFile == o.TLSCAFile && r.TLSInsecure == o.TLSInsecure && r.TLSServerName == o.TLSServerName &&
		r.SentinelMaster == o.SentinelMaster && r.Cluster == o.Cluster
}

func atoiInto(dst *int, v, name string) error {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return fmt.Errorf("config: %s: want an integer, got %q", name, v)
	}
	*dst = n
	return nil
}

func splitAddrs(list string, origin Origin) ([]string, error) {
	var out []string
	for _, a := range strings.Split(list, ",") {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return nil, fmt.Errorf("config: %s: %q is not host:port", origin, a)
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("config: %s: no host:port in it", origin)
	}
	return out, nil
}

// redisURL is what Laravel's ConfigurationUrlParser takes from a Redis URL.
type redisURL struct {
	socket     string // unix:///path.sock
	tls        bool
	host       string
	port       int
	user, pass *string
	db         *int
}

// parseRedisURL reads redis://, rediss://, tcp:// and tls:// URLs like Laravel: user and
// password are percent-decoded, the path is the database ("/2"), a ?database= query
// parameter wins over the path. unix:///path.sock?db=N names a socket. Errors never
// repeat the user information.
func parseRedisURL(s string, origin Origin) (*redisURL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("config: %s is not a valid Redis URL: %s", origin, redactURLError(s, err))
	}
	var out redisURL
	switch strings.ToLower(u.Scheme) {
	case "redis", "tcp":
	case "rediss", "tls":
		out.tls = true
	case "unix":
		if !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf("config: %s: want unix:///absolute/path.sock", origin)
		}
		out.socket = u.Path
	default:
		return nil, fmt.Errorf("config: %s: unsupported scheme %q (want redis, rediss, tcp, tls or unix)", origin, u.Scheme)
	}
	if u.Opaque != "" {
		return nil, fmt.Errorf("config: %s is not a valid Redis URL: want scheme://host:port", origin)
	}
	out.host = u.Hostname()
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 || n > 65535 {
			return nil, fmt.Errorf("config: %s: invalid port %q", origin, p)
		}
		out.port = n
	}
	if u.User != nil {
		if name := u.User.Username(); name != "" {
			out.user = &name
		}
		if pw, ok := u.User.Password(); ok {
			out.pass = &pw
		}
	}
	dbText := strings.TrimPrefix(u.Path, "/")
	if out.socket != "" {
		dbText = u.Query().Get("db") // go-redis' spelling for sockets
	}
	if d := u.Query().Get("database"); d != "" {
		dbText = d
	}
	if dbText != "" {
		n, err := strconv.Atoi(dbText)
		if err != nil || n < 0 {
			if strings.Contains(dbText, "@") {
				// A mistyped URL ("redis:/user:pw@host") puts the password in the path.
				return nil, fmt.Errorf("config: %s: the database part is not a number (it contains \"@\": is \"//\" missing before the user?)", origin)
			}
			return nil, fmt.Errorf("config: %s: database %q is not a number", origin, dbText)
		}
		out.db = &n
	}
	return &out, nil
}

// redactURLError describes a url.Parse error without the URL or anything from its user
// information.
func redactURLError(raw string, err error) string { return secret.ParseError(raw, err) }

// RedactDSN returns a URL or DSN with its secrets masked by "xxxxx": the password of its
// user information (a lone user too, as tokens travel that way) and the values of secret
// query parameters (password, token, key, secret, signature, ...; see package
// internal/secret, the one redaction of the whole tree). Other strings come back
// unchanged.
func RedactDSN(dsn string) string { return secret.URL(dsn) }
