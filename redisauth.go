package laraq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisAuthError is Redis refusing a connection's credentials (a wrong or missing
// password, a disabled ACL user, a command the user may not run). Retrying cannot help:
// the worker stops with it and commands fail at once. Server names the server (host:port
// and database), never the secret.
type RedisAuthError struct {
	Server string
	Err    error
}

func (e *RedisAuthError) Error() string {
	return fmt.Sprintf("redis at %s refused the credentials (check the password or user in REDIS_PASSWORD, REDIS_USERNAME or the URL): %v",
		e.Server, e.Err)
}

func (e *RedisAuthError) Unwrap() error { return e.Err }

// authErrorPrefixes are the replies of Redis 5–8 (and Valkey) to refused credentials.
var authErrorPrefixes = []string{"WRONGPASS", "NOAUTH", "NOPERM", "ERR invalid password", "ERR AUTH", "ERR Client sent AUTH, but no password is set"}

// isAuthError reports whether err is Redis refusing credentials or permissions.
func isAuthError(err error) bool {
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

// authError wraps err as a *RedisAuthError naming client's server when it is one.
func authError(client redis.UniversalClient, err error) error {
	if err == nil || !isAuthError(err) {
		return err
	}
	var ae *RedisAuthError
	if errors.As(err, &ae) {
		return err
	}
	return &RedisAuthError{Server: ServerOf(client), Err: err}
}

// credentialsTimeout bounds CheckCredentials' wait for a server that does not answer.
const credentialsTimeout = 2 * time.Second

// CheckCredentials pings the connection's Redis servers (the queue's and the cache's)
// and returns a *RedisAuthError when one refuses the credentials. Any other error, such
// as a server not answering yet, is not reported: a worker waits for Redis to come back.
func (c *Connection) CheckCredentials(ctx context.Context) error {
	clients := []redis.UniversalClient{c.Client}
	if c.Cache.Client != nil && c.Cache.Client != c.Client {
		clients = append(clients, c.Cache.Client)
	}
	ctx, cancel := context.WithTimeout(ctx, credentialsTimeout)
	defer cancel()
	for _, cl := range clients {
		if cl == nil {
			continue
		}
		if err := authError(cl, cl.Ping(ctx).Err()); err != nil && isAuthError(err) {
			return err
		}
	}
	return nil
}
