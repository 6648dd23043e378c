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

// loadRedis builds both connections the way Laravel's RedisManager does for the
// skeleton's config: host, port, username, password and database from their variables,
// then REDIS_URL's parts (scheme, host, port, user, password, /database, ?database=)
// replacing them. LARAQ_* overrides of single parts apply last.
func (c *Config) loadRedis(r *resolver) error {
	base := Redis{}
	host := r.str("RedisHost", "REDIS_HOST", DefaultRedisHost)
	if host == "" {
		host = DefaultRedisHost
	}
	if h, ok := strings.CutPrefix(host, "tls://"); ok {
		host, base.TLS = h, true
	}
	port, err := r.int("RedisPort", "REDIS_PORT", DefaultRedisPort, false)
	if err != nil {
		return err
	}
	if v, _ := r.get("RedisUsername", "REDIS_USERNAME"); v.set && !v.null {
		base.Username = v.str
	}
	if v, _ := r.get("RedisPassword", "REDIS_PASSWORD"); v.set && !v.null && v.str != "0" {
		// PhpRedisConnector only authenticates when ! empty($password): "" and "0" mean none.
		base.Password = v.str
	}
	db, err := r.int("RedisDB", "REDIS_DB", DefaultRedisDB, false)
	if err != nil {
		return err
	}
	cacheDB, err := r.int("CacheDB", "REDIS_CACHE_DB", DefaultCacheDB, false)
	if err != nil {
		return err
	}

	if v, origin := r.get("RedisURL", "REDIS_URL"); v.set && !v.null && v.str != "" {
		u, err := parseRedisURL(v.str, origin)
		if err != nil {
			return err
		}
		if u.host != "" {
			host = u.host
		}
		if u.socket != "" {
			host = u.socket
		}
		if u.port != 0 {
			port = u.port
		}
		if u.tls {
			base.TLS = true
		}
		if u.user != nil {
			base.Username = *u.user
		}
		if u.pass != nil {
			base.Password = *u.pass
		}
		if u.db != nil {
			// The skeleton gives both connections the same 'url', so a database in the URL
			// applies to the queue and the cache alike.
			db, cacheDB = *u.db, *u.db
			r.origins["RedisDB"], r.origins["CacheDB"] = origin, origin
		}
	}
	// Single-part overrides beat a URL from the application.
	for _, o := range []struct {
		key string
		set func(string) error
	}{
		{"REDIS_HOST", func(v string) error { host = v; return nil }},
		{"REDIS_PORT", func(v string) error { return atoiInto(&port, v, "LARAQ_REDIS_PORT") }},
		{"REDIS_USERNAME", func(v string) error { base.Username = v; return nil }},
		{"REDIS_PASSWORD", func(v string) error { base.Password = v; return nil }},
		{"REDIS_DB", func(v string) error { return atoiInto(&db, v, "LARAQ_REDIS_DB") }},
		{"REDIS_CACHE_DB", func(v string) error { return atoiInto(&cacheDB, v, "LARAQ_REDIS_CACHE_DB") }},
	} {
		if v, _, ok := r.override(o.key); ok {
			if err := o.set(v); err != nil {
				return err
			}
		}
	}
	if port <= 0 || port > 65535 {
		return fmt.Errorf("config: Redis port %d (%s) is out of range", port, r.origins["RedisPort"])
	}
	if db < 0 || cacheDB < 0 {
		return fmt.Errorf("config: Redis database numbers must not be negative (REDIS_DB %d, REDIS_CACHE_DB %d)", db, cacheDB)
	}
	base.Addrs = []string{net.JoinHostPort(host, strconv.Itoa(port))}
	if strings.HasPrefix(host, "/") {
		// A socket path, as phpredis takes it in 'host' (go-redis dials "unix" for it).
		base.Addrs = []string{host}
	}

	if v, _, ok := r.override("REDIS_TLS"); ok {
		base.TLS = truthy(v)
	}
	if v, _, ok := r.override("REDIS_TLS_CA"); ok {
		base.TLSCAFile, base.TLS = v, true
	}
	if v, _, ok := r.override("REDIS_TLS_INSECURE"); ok {
		base.TLSInsecure = truthy(v)
	}
	if v, _, ok := r.override("REDIS_TLS_SERVER_NAME"); ok {
		base.TLSServerName = v
	}

	sentinel, sOrigin, hasSentinel := r.override("REDIS_SENTINEL")
	cluster, cOrigin, hasCluster := r.override("REDIS_CLUSTER")
	switch {
	case hasSentinel && hasCluster:
		return fmt.Errorf("config: %s and %s are both set; a connection is either Sentinel or Cluster", sOrigin, cOrigin)
	case hasSentinel:
		addrs, err := splitAddrs(sentinel, sOrigin)
		if err != nil {
			return err
		}
		base.Addrs = addrs
		base.SentinelMaster = DefaultSentinelMaster
		if v, _, ok := r.override("REDIS_SENTINEL_MASTER"); ok && v != "" {
			base.SentinelMaster = v
		}
		base.SentinelUsername, _, _ = r.override("REDIS_SENTINEL_USERNAME")
		base.SentinelPassword, _, _ = r.override("REDIS_SENTINEL_PASSWORD")
		r.origins["RedisAddrs"] = sOrigin
	case hasCluster:
		addrs, err := splitAddrs(cluster, cOrigin)
		if err != nil {
			return err
		}
		base.Addrs, base.Cluster = addrs, true
		r.origins["RedisAddrs"] = cOrigin
	}

	c.Redis = base
	c.Redis.DB = db
	c.CacheRedis = base
	c.CacheRedis.DB = cacheDB
	conn := cacheConnectionDefault
	if c.major() >= 11 {
		conn = r.str("CacheConnection", "REDIS_CACHE_CONNECTION", cacheConnectionDefault)
	} else if v, origin, ok := r.override("REDIS_CACHE_CONNECTION"); ok {
		conn = v
		r.origins["CacheConnection"] = origin
	}
	switch conn {
	case "default":
		c.CacheRedis.DB = db
	case cacheConnectionDefault:
	default:
		c.warn("REDIS_CACHE_CONNECTION is %q; laraq knows the skeleton's connections default and cache only and uses cache (REDIS_CACHE_DB %d)", conn, cacheDB)
	}
	if base.Cluster && cacheDB != db && conn == cacheConnectionDefault {
		// A cluster has one keyspace: Laravel's cache keys share it with the queue.
		c.CacheRedis.DB = 0
	}
	return nil
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
// information (net/url's messages quote the offending part, which may be the password).
func redactURLError(raw string, err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	var ee url.EscapeError
	if errors.As(err, &ee) {
		return "invalid %-escape"
	}
	if rest, ok := strings.CutPrefix(raw, "//"); ok || strings.Contains(raw, "://") {
		if !ok {
			_, rest, _ = strings.Cut(raw, "://")
		}
		auth := rest
		if i := strings.IndexAny(auth, "/?#"); i >= 0 {
			auth = auth[:i]
		}
		if i := strings.LastIndex(auth, "@"); i >= 0 {
			info := auth[:i]
			for _, part := range append([]string{info}, strings.Split(info, ":")...) {
				if part != "" {
					msg = strings.ReplaceAll(msg, part, redacted)
				}
			}
		}
	}
	return msg
}

// RedactDSN returns a URL-shaped DSN with its password replaced by "xxxxx"; other
// strings come back unchanged.
func RedactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		if strings.Contains(dsn, "@") {
			return redacted
		}
		return dsn
	}
	if u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), redacted)
	}
	return u.String()
}
