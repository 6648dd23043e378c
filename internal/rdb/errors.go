package rdb

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Errors of a Redis server that retrying cannot fix, and how servers are named in them
// (never with their credentials).

// AuthError is Redis refusing a connection's credentials (a wrong or missing
// password, a disabled ACL user). Retrying cannot help:
// the worker stops with it and commands fail at once. Server names the server (host:port
// and database), never the secret.
type AuthError struct {
	Server string
	Err    error
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("redis at %s refused the credentials (check the password or user in REDIS_PASSWORD, REDIS_USERNAME or the URL): %v",
		e.Server, e.Err)
}

func (e *AuthError) Unwrap() error { return e.Err }

// authErrorPrefixes are the replies of Redis 5–8 (and Valkey) to refused credentials.
// NOPERM is not one: the credentials were accepted and the user may not run one command
// or reach one key (a *ConfigError, ErrNoPermission), which another password would not
// change.
var authErrorPrefixes = []string{"WRONGPASS", "NOAUTH", "ERR invalid password", "ERR AUTH", "ERR Client sent AUTH, but no password is set"}

// IsAuthError reports whether err is Redis refusing credentials.
func IsAuthError(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	for _, p := range authErrorPrefixes {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// AuthErrorOf wraps err as an *AuthError naming client's server when it is one.
func AuthErrorOf(client redis.UniversalClient, err error) error {
	if err == nil || !IsAuthError(err) {
		return err
	}
	var ae *AuthError
	if errors.As(err, &ae) {
		return err
	}
	return &AuthError{Server: ServerOf(client), Err: err}
}

// ServerOf names the Redis server(s) a client talks to, without credentials:
// "127.0.0.1:6379/0", "cluster 10.0.0.1:7000,10.0.0.2:7000", "sentinel master mymaster
// via 10.0.0.1:26379,10.0.0.2:26379/0" (a client with a ServerName method names itself).
func ServerOf(c redis.UniversalClient) string {
	switch cl := c.(type) {
	case nil:
		return "no redis client"
	case interface{ ServerName() string }: // laravel.Connect's Sentinel clients
		return cl.ServerName()
	case *redis.Client:
		o := cl.Options()
		if o.Addr == "FailoverClient" { // go-redis' name for every Sentinel client
			return fmt.Sprintf("sentinel/%d", o.DB)
		}
		return fmt.Sprintf("%s/%d", o.Addr, o.DB)
	case *redis.ClusterClient:
		return "cluster " + strings.Join(cl.Options().Addrs, ",")
	case *redis.Ring:
		return "ring"
	}
	return fmt.Sprintf("%T", c)
}

// ViaSentinel reports whether c reaches its master through Sentinel: go-redis' failover
// client, also wrapped (laravel.Connect names it). A READONLY from such a client is a
// failover under way, since the Sentinels name the master it talks to.
func ViaSentinel(c redis.UniversalClient) bool {
	cl, ok := c.(interface{ Options() *redis.Options })
	return ok && cl.Options().Addr == "FailoverClient"
}
