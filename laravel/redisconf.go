package laravel

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// redisRole is one of the two Redis connections laraq opens: the queue's and the cache
// store's. Origins are recorded under the queue's names (RedisHost, RedisDB, …) and, for
// the cache, CacheDB.
type redisRole struct {
	conn     string // the connection's name in config/database.php redis
	dbVar    string // REDIS_DB or REDIS_CACHE_DB
	dbName   string // the Origins key of its database
	prefix   string // Origins key of its prefix
	skelConn string // the skeleton's connection of this role
}

// redisParts is a connection as RedisManager builds it: the config keys, then the URL's
// parts over them (ConfigurationUrlParser).
type redisParts struct {
	host           string
	port           int
	user, pass     string
	db             int
	dbOrigin       Origin
	dbBeforeURL    int // the database the keys gave, before the URL's
	dbBeforeOrigin Origin
	tls            bool
	urlOrigin      Origin
	urlDB          bool // the URL named the database
}

// loadRedis builds both connections the way Laravel's RedisManager does for the
// application's config/database.php: host, port, username, password and database of each
// connection, then its url's parts (scheme, host, port, user, password, /database,
// ?database=) replacing them. LARAQ_* overrides of single parts apply last. The prefix is
// the connection's, as the PHP client composes it (see connectionPrefix).
func (l *loader) loadRedis(known bool) error {
	c, r := l.c, l.r
	queue := redisRole{conn: c.RedisConnection, dbVar: "REDIS_DB", dbName: "RedisDB", prefix: "Prefix", skelConn: "default"}
	cache := redisRole{conn: c.CacheConnection, dbVar: "REDIS_CACHE_DB", dbName: "CacheDB", prefix: "CacheConnectionPrefix", skelConn: "cache"}
	client := l.str(setting{name: "RedisClient", file: "database", path: []string{"redis", "client"}, vars: []string{"REDIS_CLIENT"}}, "phpredis")

	q, err := l.redisParts(queue, "Redis")
	if err != nil {
		return err
	}
	ch, err := l.redisParts(cache, "CacheRedis")
	if err != nil {
		return err
	}
	if known && ch.urlDB && (ch.urlOrigin.Kind == Flag || ch.urlOrigin.Kind == LaraqEnv) && ch.dbBeforeURL != ch.db && c.CacheConnection != c.RedisConnection {
		if _, _, ok := r.override("REDIS_CACHE_DB"); !ok {
			c.warn("%s names database %d: as Laravel does with a REDIS_URL, laraq uses it for the cache connection too, but the application's cache connection %q is on database %d (%s), where PHP workers keep queue:restart, queue:pause and the maxExceptions counters: neither side will see the other's; set LARAQ_REDIS_CACHE_DB=%d, or leave the database out of the URL",
				ch.urlOrigin, ch.db, c.CacheConnection, ch.dbBeforeURL, ch.dbBeforeOrigin, ch.dbBeforeURL)
		}
	}

	build := func(p redisParts) Redis {
		rd := Redis{Username: p.user, Password: p.pass, TLS: p.tls, DB: p.db}
		rd.Addrs = []string{net.JoinHostPort(p.host, strconv.Itoa(p.port))}
		if strings.HasPrefix(p.host, "/") {
			// A socket path, as phpredis takes it in 'host' (go-redis dials "unix" for it).
			rd.Addrs = []string{p.host}
		}
		if v, _, ok := r.override("REDIS_TLS"); ok {
			rd.TLS = truthy(v)
		}
		if v, _, ok := r.override("REDIS_TLS_CA"); ok {
			rd.TLSCAFile, rd.TLS = v, true
		}
		if v, _, ok := r.override("REDIS_TLS_INSECURE"); ok {
			rd.TLSInsecure = truthy(v)
		}
		if v, _, ok := r.override("REDIS_TLS_SERVER_NAME"); ok {
			rd.TLSServerName = v
		}
		return rd
	}
	c.Redis, c.CacheRedis = build(q), build(ch)
	sentinel, sOrigin, hasSentinel := r.override("REDIS_SENTINEL")
	cluster, cOrigin, hasCluster := r.override("REDIS_CLUSTER")
	_, uOrigin, hasURL := r.override("REDIS_URL")
	switch {
	case hasSentinel && hasURL && uOrigin.Kind == Flag && sOrigin.Kind == Flag:
		return fmt.Errorf("config: %s and %s are both given; name either one server or the Sentinels", uOrigin, sOrigin)
	case hasSentinel && hasURL && uOrigin.Kind == Flag:
		// A server named on the command line is what the operator means now.
		c.warn("%s is ignored: %s names the server", sOrigin, uOrigin)
		hasSentinel = false
	}
	// The application's own Sentinels (predis), unless laraq is told of another server.
	appMaster := DefaultSentinelMaster
	if _, _, hostSet := r.override("REDIS_HOST"); !hasCluster && !hasURL && !hostSet {
		for _, cr := range []struct {
			conn string
			rd   *Redis
		}{{c.RedisConnection, &c.Redis}, {c.CacheConnection, &c.CacheRedis}} {
			s, err := l.appSentinel(cr.conn, client)
			if err != nil {
				return err
			}
			if s == nil {
				continue
			}
			if cr.rd == &c.Redis {
				appMaster = s.master
			}
			if !hasSentinel {
				s.apply(cr.rd)
				if cr.rd == &c.Redis {
					r.origins["RedisAddrs"] = s.origin
				}
			}
		}
	}
	switch {
	case hasSentinel && hasCluster:
		return fmt.Errorf("config: %s and %s are both set; a connection is either Sentinel or Cluster", sOrigin, cOrigin)
	case hasSentinel:
		addrs, err := splitAddrs(sentinel, sOrigin)
		if err != nil {
			return err
		}
		master := appMaster
		if v, _, ok := r.override("REDIS_SENTINEL_MASTER"); ok && v != "" {
			master = v
		}
		user, _, _ := r.override("REDIS_SENTINEL_USERNAME")
		pass, _, _ := r.override("REDIS_SENTINEL_PASSWORD")
		for _, rd := range []*Redis{&c.Redis, &c.CacheRedis} {
			rd.Addrs, rd.SentinelMaster, rd.SentinelUsername, rd.SentinelPassword = addrs, master, user, pass
		}
		r.origins["RedisAddrs"] = sOrigin
	case hasCluster:
		addrs, err := splitAddrs(cluster, cOrigin)
		if err != nil {
			return err
		}
		for _, rd := range []*Redis{&c.Redis, &c.CacheRedis} {
			rd.Addrs, rd.Cluster = addrs, true
		}
		// A cluster has one keyspace: Laravel's cache keys share it with the queue.
		c.CacheRedis.DB = 0
		r.origins["RedisAddrs"] = cOrigin
	}

	// The prefix: a LARAQ_REDIS_PREFIX wins; otherwise the queue connection's, as its PHP
	// client composes it.
	if v, origin, ok := r.override("REDIS_PREFIX"); ok {
		c.Prefix = v
		r.origins["Prefix"] = origin
		return nil
	}
	pv := l.connectionPrefix(queue, client)
	c.Prefix, r.origins["Prefix"] = pv.str(), pv.origin
	if !known && pv.origin.Kind == Default {
		c.Prefix = ""
		r.origins["Prefix"] = Origin{Kind: NoApplication}
	}
	if cp := l.connectionPrefix(cache, client); cp.str() != c.Prefix && known {
		c.warn("the cache connection %q has the prefix %q (%s), the queue connection %q %q: laraq reads and writes the cache keys under the queue connection's prefix",
			c.CacheConnection, cp.str(), cp.origin, c.RedisConnection, c.Prefix)
	}
	return nil
}

// redisParts evaluates one connection. name prefixes the Origins keys of the cache role
// ("CacheRedis"); the queue role records the historical names (RedisHost, RedisDB, …).
func (l *loader) redisParts(role redisRole, name string) (redisParts, error) {
	c, r := l.c, l.r
	key := func(k string) string {
		if name == "Redis" {
			return "Redis" + k
		}
		return name + k
	}
	conn := role.conn
	useSkeleton := false
	if lk := l.layers.get("database", "redis", conn); lk.status == absent || lk.status == builtin && lk.node == nil || lk.status == found && !lk.node.isArray {
		where := lk.file
		if lk.status == builtin {
			where = fmt.Sprintf("the %s skeleton's %s", l.layers.skelEra, lk.file)
		}
		c.warn("%s has no Redis connection %q: PHP fails with \"Redis connection [%s] not configured\"; laraq uses the skeleton's %q connection instead",
			where, conn, conn, role.skelConn)
		conn, useSkeleton = role.skelConn, true
	}
	get := func(origin, k string, vars []string) value {
		s := setting{name: origin, file: "database", path: []string{"redis", conn, k}, vars: vars, noOverride: true}
		if useSkeleton {
			v := l.skeletonValue(s)
			r.origins[origin] = v.origin
			return v
		}
		return l.value(s)
	}
	var p redisParts
	host := get(key("Host"), "host", []string{"REDIS_HOST"})
	p.host = host.str()
	if p.host == "" {
		p.host = DefaultRedisHost
	}
	// The connection's 'scheme' (not in the skeletons; applications add
	// 'scheme' => env('REDIS_SCHEME', 'tcp') for TLS): PhpRedisConnector puts it before
	// the host ("tls://host"), predis takes it as its scheme parameter. A scheme in the
	// host itself ("tls://host", phpredis also "ssl://") says the same.
	scheme := get(key("Scheme"), "scheme", []string{"REDIS_SCHEME"})
	if scheme.ok && scheme.v.kind != phpNull && tlsScheme(scheme.str()) {
		p.tls = true
	}
	if sch, h, ok := strings.Cut(p.host, "://"); ok {
		switch {
		case tlsScheme(sch):
			p.host, p.tls = h, true
		case strings.EqualFold(sch, "tcp"):
			p.host = h
		}
	}
	port := get(key("Port"), "port", []string{"REDIS_PORT"})
	var err error
	if p.port, err = l.intOf(setting{path: []string{"redis", conn, "port"}, file: "database", vars: []string{"REDIS_PORT"}}, port, DefaultRedisPort); err != nil {
		return p, err
	}
	if v := get(key("Username"), "username", []string{"REDIS_USERNAME"}); v.ok && v.v.kind != phpNull {
		p.user = v.str()
	}
	if v := get(key("Password"), "password", []string{"REDIS_PASSWORD"}); v.ok && v.v.kind != phpNull && v.str() != "0" {
		// PhpRedisConnector only authenticates when ! empty($password): "" and "0" mean none.
		p.pass = v.str()
	}
	dbKey := role.dbName
	if name != "Redis" && dbKey == "RedisDB" {
		dbKey = key("DB")
	}
	dbDefault := DefaultRedisDB
	if role.skelConn == "cache" {
		dbDefault = DefaultCacheDB
	}
	db := get(dbKey, "database", []string{role.dbVar})
	if p.db, err = l.intOf(setting{path: []string{"redis", conn, "database"}, file: "database", vars: []string{role.dbVar}}, db, dbDefault); err != nil {
		return p, err
	}
	p.dbOrigin = r.origins[dbKey]
	p.dbBeforeURL, p.dbBeforeOrigin = p.db, p.dbOrigin

	var urlValue value
	if v, origin, ok := r.override("REDIS_URL"); ok {
		urlValue = value{v: phpStr(v), origin: origin, ok: true}
		r.origins[key("URL")] = origin
	} else {
		urlValue = get(key("URL"), "url", []string{"REDIS_URL"})
	}
	if urlValue.ok && urlValue.v.kind != phpNull && urlValue.str() != "" {
		u, err := parseRedisURL(urlValue.str(), urlValue.origin)
		if err != nil {
			return p, err
		}
		p.urlOrigin = urlValue.origin
		if u.host != "" {
			p.host = u.host
		}
		if u.socket != "" {
			p.host = u.socket
		}
		if u.port != 0 {
			p.port = u.port
		}
		if u.tls {
			p.tls = true
		}
		if u.user != nil {
			p.user = *u.user
		}
		if u.pass != nil {
			p.pass = *u.pass
		}
		if u.db != nil {
			// The skeleton gives both connections the same 'url', so a database in the URL
			// applies to the queue and the cache alike.
			p.db, p.dbOrigin, p.urlDB = *u.db, urlValue.origin, true
			r.origins[dbKey] = urlValue.origin
		}
	}
	// Single-part overrides beat a URL from the application.
	for _, o := range []struct {
		key string
		set func(string) error
	}{
		{"REDIS_HOST", func(v string) error { p.host = v; return nil }},
		{"REDIS_PORT", func(v string) error { return atoiInto(&p.port, v, "LARAQ_REDIS_PORT") }},
		{"REDIS_USERNAME", func(v string) error { p.user = v; return nil }},
		{"REDIS_PASSWORD", func(v string) error { p.pass = v; return nil }},
		{role.dbVar, func(v string) error { return atoiInto(&p.db, v, EnvPrefix+role.dbVar) }},
	} {
		if v, origin, ok := r.override(o.key); ok {
			if err := o.set(v); err != nil {
				return p, err
			}
			if o.key == role.dbVar {
				r.origins[dbKey] = origin
			}
		}
	}
	if p.port <= 0 || p.port > 65535 {
		return p, fmt.Errorf("config: Redis port %d (%s) is out of range", p.port, r.origins[key("Port")])
	}
	if p.db < 0 {
		return p, fmt.Errorf("config: Redis database numbers must not be negative (%s %d, %s)", role.dbVar, p.db, r.origins[dbKey])
	}
	return p, nil
}

// tlsScheme reports whether a connection's scheme means TLS: tls (Laravel's, and a
// rediss:// URL's, which ConfigurationUrlParser maps to tls), ssl (phpredis) or rediss.
func tlsScheme(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "tls", "ssl", "rediss":
		return true
	}
	return false
}

// connectionPrefix is the prefix the PHP client of a connection applies: the
// connection's own 'prefix', else its 'options' => ['prefix'], else the global
// redis.options.prefix (phpredis from 9.12, and predis); phpredis before 9.12 merged
// them the other way: options, then the global prefix, then the connection's 'prefix'.
func (l *loader) connectionPrefix(role redisRole, client string) value {
	conn := role.conn
	if lk := l.layers.get("database", "redis", conn); lk.status != found && !(lk.status == builtin && lk.node != nil) {
		conn = role.skelConn
	}
	present := func(path ...string) (value, bool) {
		lk := l.layers.get("database", path...)
		if lk.status != found {
			return value{}, false
		}
		v := l.fromConfig(setting{file: "database", path: path})
		return v, v.ok
	}
	own, hasOwn := present("redis", conn, "prefix")
	hasOwn = hasOwn && own.v.kind != phpNull // isset()
	opt, hasOpt := present("redis", conn, "options", "prefix")
	global := func() value {
		v := l.value(setting{name: role.prefix, file: "database", path: []string{"redis", "options", "prefix"}, vars: []string{"REDIS_PREFIX"}, noOverride: true})
		if !v.ok {
			v = value{v: phpStr(""), ok: true}
		}
		return v
	}
	oldPhpredis := client == "phpredis" && !l.c.Release.AtLeast(9, 12, 0)
	switch {
	case oldPhpredis && hasOpt:
		return opt
	case oldPhpredis:
		if lk := l.layers.get("database", "redis", "options", "prefix"); lk.status != absent || !hasOwn {
			return global()
		}
		return own
	case hasOwn:
		return own
	case hasOpt:
		return opt
	}
	return global()
}
