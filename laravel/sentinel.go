package laravel

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Sentinel in a Laravel application: laravel/framework connects through Sentinel with
// predis only. Its PredisConnector hands predis the connection's config (a list of the
// Sentinels, each an array of host, port and optionally password and username, or a
// "tcp://host:port" string) with the options of redis.options merged under the
// connection's own 'options' (RedisManager::resolve, PredisConnector::connect):
//
//	'redis' => [
//	    'client' => 'predis',
//	    'options' => [
//	        'replication' => 'sentinel',
//	        'service' => env('REDIS_SENTINEL_SERVICE', 'mymaster'),
//	        'parameters' => ['password' => env('REDIS_PASSWORD'), 'database' => 0],
//	    ],
//	    'default' => [
//	        ['host' => '10.0.0.1', 'port' => 26379],
//	        'tcp://10.0.0.2:26379',
//	    ],
//	],
//
// 'parameters' (or 'parameters.CONNECTION', which RedisManager prefers) are the master's
// connection parameters: its password, username and database. 'service' defaults to
// predis' "mymaster". The framework's PhpRedisConnector (5.8 to 13.x) has no Sentinel
// support; packages that add one are not read: name the Sentinels with
// LARAQ_REDIS_SENTINEL instead.

// sentinelConf is a connection's Sentinel deployment as the application names it.
type sentinelConf struct {
	addrs              []string
	master             string
	username, password string // the Sentinels' own AUTH (predis: each Sentinel's parameters)
	// The master's parameters; nil: not named there.
	dataUser, dataPass *string
	dataDB             *int
	origin             Origin
}

// appSentinel reads predis' Sentinel replication for a connection (nil when the
// connection does not use it).
func (l *loader) appSentinel(conn, client string) (*sentinelConf, error) {
	if client != "predis" {
		return nil, nil
	}
	opt := func(key string) (value, bool) {
		// The connection's options replace the global ones key by key (array_merge).
		for _, path := range [][]string{{"redis", conn, "options", key}, {"redis", "options", key}} {
			if lk := l.layers.get("database", path...); lk.status == found && lk.node != nil {
				v := l.fromConfig(setting{file: "database", path: path})
				return v, v.ok && v.v.kind != phpNull
			}
		}
		return value{}, false
	}
	repl, ok := opt("replication")
	if !ok || !strings.EqualFold(repl.str(), "sentinel") {
		return nil, nil
	}
	s := &sentinelConf{master: "mymaster", origin: repl.origin}
	if v, ok := opt("service"); ok && v.str() != "" {
		s.master = v.str()
	}
	lk := l.layers.get("database", "redis", conn)
	if lk.status != found || lk.node == nil || !lk.node.isArray {
		return nil, fmt.Errorf("config: %s: redis.%s uses Sentinel replication (%s) but is not a list of Sentinels laraq can read", lk.file, conn, repl.origin)
	}
	for _, e := range lk.node.entries {
		if _, err := strconv.Atoi(e.key); err != nil {
			continue // 'options', 'prefix', …: not a Sentinel
		}
		path := []string{"redis", conn, e.key}
		var host, port, user, pass string
		if e.value.isArray {
			field := func(k string) string {
				v := l.fromConfig(setting{file: "database", path: append(append([]string{}, path...), k)})
				if !v.ok || v.v.kind == phpNull {
					return ""
				}
				return v.str()
			}
			host, port, user, pass = field("host"), field("port"), field("username"), field("password")
		} else {
			v := l.fromConfig(setting{file: "database", path: path})
			u, err := url.Parse(v.str())
			if err != nil || u.Host == "" {
				return nil, fmt.Errorf("config: %s: Sentinel %s of redis.%s is not tcp://host:port", lk.file, e.key, conn)
			}
			host, port = u.Hostname(), u.Port()
			pass = u.Query().Get("password")
			if u.User != nil {
				user = u.User.Username()
				if pw, ok := u.User.Password(); ok {
					pass = pw
				}
			}
		}
		if host == "" {
			host = DefaultRedisHost
		}
		if port == "" {
			port = "26379" // predis' default for a Sentinel
		}
		if _, err := strconv.Atoi(port); err != nil {
			return nil, fmt.Errorf("config: %s: Sentinel %s of redis.%s has the port %q", lk.file, e.key, conn, port)
		}
		s.addrs = append(s.addrs, net.JoinHostPort(host, port))
		if s.password == "" {
			s.username, s.password = user, pass
		}
	}
	if len(s.addrs) == 0 {
		return nil, fmt.Errorf("config: %s: redis.%s uses Sentinel replication (%s) but lists no Sentinel", lk.file, conn, repl.origin)
	}
	// The master's parameters: the connection's own options' 'parameters' when it has
	// them (array_merge replaces the whole key), else redis.options.parameters.CONNECTION
	// (Arr::get in RedisManager::resolve), else redis.options.parameters.
	base := []string{"redis", "options", "parameters"}
	for _, p := range [][]string{{"redis", conn, "options", "parameters"}, {"redis", "options", "parameters", conn}} {
		if lk := l.layers.get("database", p...); lk.status == found && lk.node != nil {
			base = p
			break
		}
	}
	param := func(k string) (value, bool) {
		path := append(append([]string{}, base...), k)
		if lk := l.layers.get("database", path...); lk.status != found || lk.node == nil || lk.node.isArray {
			return value{}, false
		}
		v := l.fromConfig(setting{file: "database", path: path})
		return v, v.ok && v.v.kind != phpNull
	}
	if v, ok := param("password"); ok && v.str() != "" {
		pw := v.str()
		s.dataPass = &pw
	}
	if v, ok := param("username"); ok && v.str() != "" {
		u := v.str()
		s.dataUser = &u
	}
	if v, ok := param("database"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v.str()))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("config: redis Sentinel parameters: database %q (%s) is not a number", v.str(), v.origin)
		}
		s.dataDB = &n
	}
	return s, nil
}

// apply makes rd a Sentinel connection of s.
func (s *sentinelConf) apply(rd *Redis) {
	rd.Addrs, rd.SentinelMaster, rd.SentinelUsername, rd.SentinelPassword = s.addrs, s.master, s.username, s.password
	if s.dataUser != nil {
		rd.Username = *s.dataUser
	}
	if s.dataPass != nil {
		rd.Password = *s.dataPass
	}
	// The list of Sentinels has no 'database' of its own: the master's is the
	// parameters', or predis' default 0.
	rd.DB = 0
	if s.dataDB != nil {
		rd.DB = *s.dataDB
	}
}
