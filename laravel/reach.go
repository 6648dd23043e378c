package laravel

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
)

// Errors Connect returns for a Redis that no waiting will make usable; errors.Is tells
// them apart (the error also names the server and the fix).
var (
	// ErrRedisTLS is a TLS handshake that failed on the certificate (an authority this
	// machine does not trust, a name the certificate does not carry, an expired one) or
	// on a server that does not speak TLS on that port.
	ErrRedisTLS = errors.New("redis TLS handshake failed")
	// ErrSentinel is a Sentinel deployment of which no Sentinel answered, or none knows
	// the master set's name.
	ErrSentinel = errors.New("redis sentinel")
)

// reachTimeout bounds Connect's check of the servers. A server that does not answer
// within it is waited for by what uses the connection, as before.
const reachTimeout = 3 * time.Second

// checkServers pings the queue's and the cache's Redis once and turns what no retry
// heals into an error: a certificate the client refuses, a TLS client on a plain port,
// and, for Sentinel, every Sentinel unreachable or ignorant of the master's name (a
// worker would otherwise log "worker started" and warn forever).
func (c *Config) checkServers(ctx context.Context, conn *laraq.Connection) error {
	type server struct {
		conf   Redis
		client redis.UniversalClient
	}
	servers := []server{{c.Redis, conn.Client}}
	if conn.Cache.Client != nil && conn.Cache.Client != conn.Client {
		servers = append(servers, server{c.CacheRedis, conn.Cache.Client})
	}
	ctx, cancel := context.WithTimeout(ctx, reachTimeout)
	defer cancel()
	for _, s := range servers {
		if s.conf.SentinelMaster != "" {
			if err := checkSentinels(ctx, s.conf); err != nil {
				return err
			}
			continue
		}
		if !s.conf.TLS {
			continue // CheckCredentials' ping said what a plain server can
		}
		if err := serverError(s.conf, s.client.Ping(ctx).Err()); err != nil {
			return err
		}
	}
	return nil
}

// serverError explains err when it is one no retry heals, and returns nil otherwise.
func serverError(r Redis, err error) error {
	if err == nil {
		return nil
	}
	where := r.String()
	var (
		unknownCA x509.UnknownAuthorityError
		hostErr   x509.HostnameError
		invalid   x509.CertificateInvalidError
		header    tls.RecordHeaderError
	)
	switch {
	case errors.As(err, &unknownCA):
		return fmt.Errorf("%w: redis at %s: the server's certificate is signed by an authority this machine does not trust (%v); give the CA's PEM file with LARAQ_REDIS_TLS_CA",
			ErrRedisTLS, where, unknownCA)
	case errors.As(err, &hostErr):
		return fmt.Errorf("%w: redis at %s: the server's certificate does not carry the name connected to (%v); connect by a name it carries, or name the one to expect with LARAQ_REDIS_TLS_SERVER_NAME",
			ErrRedisTLS, where, hostErr)
	case errors.As(err, &invalid):
		return fmt.Errorf("%w: redis at %s: the server's certificate is not valid (%v)", ErrRedisTLS, where, invalid)
	case errors.As(err, &header):
		return fmt.Errorf("%w: redis at %s: the server does not speak TLS on that port (%v); use redis:// (no TLS) or the server's TLS port", ErrRedisTLS, where, err)
	}
	return nil
}

// checkSentinels asks each Sentinel of r for its master, all at once: an error when none
// answers (each one's error joined) or none knows the master's name. go-redis' own client
// would retry until the context ends and report only "context deadline exceeded".
func checkSentinels(ctx context.Context, r Redis) error {
	o, err := r.UniversalOptions()
	if err != nil {
		return err
	}
	errs := make([]error, len(r.Addrs))
	var wg sync.WaitGroup
	for i, addr := range r.Addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := redis.NewSentinelClient(&redis.Options{Addr: addr, Username: r.SentinelUsername, Password: r.SentinelPassword,
				TLSConfig: o.TLSConfig, MaxRetries: -1, DialTimeout: reachTimeout})
			defer sc.Close()
			if _, err := sc.GetMasterAddrByName(ctx, r.SentinelMaster).Result(); err != nil {
				errs[i] = fmt.Errorf("%s: %w", addr, err)
			}
		}()
	}
	wg.Wait()
	unknown := 0
	for _, e := range errs {
		switch {
		case e == nil:
			return nil // a Sentinel names the master: go-redis will find it
		case errors.Is(e, redis.Nil):
			unknown++
		}
	}
	if err := serverError(r, errors.Join(errs...)); err != nil {
		return err // a Sentinel's refused certificate
	}
	if unknown == len(errs) {
		return fmt.Errorf("%w: no Sentinel at %s knows a master named %q (SENTINEL GET-MASTER-ADDR-BY-NAME answered nil); check --redis-sentinel-master (LARAQ_REDIS_SENTINEL_MASTER)",
			ErrSentinel, strings.Join(r.Addrs, ","), r.SentinelMaster)
	}
	var parts []string
	for _, e := range errs {
		if !errors.Is(e, redis.Nil) {
			parts = append(parts, e.Error())
		}
	}
	return fmt.Errorf("%w: none of the Sentinels %s answered for master %q: %s", ErrSentinel, strings.Join(r.Addrs, ","), r.SentinelMaster, strings.Join(parts, "; "))
}
