package rdb

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Refusals of a Redis setup that no retry heals. Each is told apart by the code Redis
// puts first in its error reply (Redis ≤6 wraps the error of a command a script ran in
// "ERR Error running script (call to f_SHA): @user_script:N: ...", which is looked into):
//
//	READONLY   a write sent to a replica ("You can't write against a read only replica.")
//	CROSSSLOT  a script's keys in different slots of a Cluster
//	NOPERM     an ACL user denied a command or a key (Redis 7.0 says "ERR The user
//	           executing the script can't run this command or subcommand" for a command a
//	           script ran)
//	ERR unknown command 'NAME'   a server, or a proxy, without the command
//	NOSCRIPT   after the EVAL fallback: a server that does not keep the script it ran
//	WRONGTYPE  a key holding another type than the command works on
//
// Out of memory (OOM, see IsOutOfMemory) is not one of them: it heals when memory is
// freed.

// The reasons a *ConfigError gives; errors.Is(err, ErrReadOnly) tells them apart.
var (
	ErrReadOnly       = errors.New("redis is a read-only replica")
	ErrCrossSlot      = errors.New("the keys of a queue are in different Redis Cluster slots")
	ErrNoPermission   = errors.New("the redis user may not run a command laraq needs")
	ErrUnknownCommand = errors.New("redis lacks a command laraq needs")
	ErrNoScript       = errors.New("redis does not keep the scripts laraq runs")
	ErrWrongType      = errors.New("a key of a queue holds the wrong type")
)

// ConfigError is Redis refusing laraq for a reason of its setup, which no retry heals:
// Reason says which (errors.Is(err, ErrReadOnly), ...). The message names the server
// (never its credentials), the queue and the key where they are known, and the fix.
type ConfigError struct {
	Reason  error  // ErrReadOnly, ErrCrossSlot, ErrNoPermission, ErrUnknownCommand, ErrNoScript or ErrWrongType
	Server  string // ServerOf the client
	User    string // the ACL user, "" for the default one (named in the fix of ErrNoPermission)
	Queue   string // the queue concerned; "" when not one queue's
	Key     string // the key concerned, when known
	Type    string // ErrWrongType: what Key holds (TYPE), when known
	Want    string // ErrWrongType: what Key must hold
	Command string // ErrNoPermission, ErrUnknownCommand: the command refused, when Redis named it
	Err     error  // Redis' reply
}

func (e *ConfigError) Error() string {
	reply := shortReply(e.Err)
	if e.Reason == ErrWrongType && e.Key != "" {
		reply = "WRONGTYPE" // what() says what the reply would repeat
	}
	return fmt.Sprintf("redis at %s: %s (%s); fix: %s", e.Server, e.what(), reply, e.Fix())
}

// Unwrap returns Redis' reply.
func (e *ConfigError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, e.Reason) true.
func (e *ConfigError) Is(target error) bool { return target == e.Reason }

// what says what is wrong, naming the queue, key and command where known.
func (e *ConfigError) what() string {
	switch e.Reason {
	case ErrReadOnly:
		return "the server is a read-only replica"
	case ErrCrossSlot:
		return fmt.Sprintf("the keys of queue %q are in different Cluster slots", e.Queue)
	case ErrNoPermission:
		switch {
		case e.Command != "":
			return fmt.Sprintf("the user may not run %s, which laraq needs", strings.ToUpper(e.Command))
		case strings.Contains(e.Err.Error(), "key"):
			return fmt.Sprintf("the user may not access the keys of queue %q", e.Queue)
		}
		return "the user may not run a command laraq needs"
	case ErrUnknownCommand:
		return fmt.Sprintf("the server does not know %s, which laraq needs", strings.ToUpper(e.Command))
	case ErrNoScript:
		return "the server does not keep the Lua scripts laraq runs (NOSCRIPT after EVAL)"
	case ErrWrongType:
		if e.Key == "" {
			return fmt.Sprintf("a key of queue %q holds the wrong type", e.Queue)
		}
		return fmt.Sprintf("key %s of queue %q holds a %s, not a %s", e.Key, e.Queue, e.Type, e.Want)
	}
	return e.Reason.Error()
}

// Fix says what the operator can do.
func (e *ConfigError) Fix() string {
	user := e.User
	if user == "" {
		user = "default"
	}
	switch e.Reason {
	case ErrReadOnly:
		return "point laraq at the master (REDIS_HOST, --redis), or reach it through Sentinel (--redis-sentinel), which follows a failover"
	case ErrCrossSlot:
		bare := strings.Trim(e.Queue, "{}")
		return fmt.Sprintf("name the queue {%s} in the application and in laraq (Laravel ≤13.4 on a Cluster), or move to Laravel 13.5+, whose queue names laraq tags by itself (Connection.HashTags)", bare)
	case ErrNoPermission:
		switch {
		case e.Command != "":
			return fmt.Sprintf("grant it: ACL SETUSER %s +%s", user, strings.ToLower(e.Command))
		case strings.Contains(e.Err.Error(), "key") && e.Key != "":
			return fmt.Sprintf("grant the queue's keys: ACL SETUSER %s ~%s*", user, e.Key)
		}
		return fmt.Sprintf("grant the user the commands laraq runs, those its scripts run included (ACL SETUSER %s +@list +@sortedset +@string +@keyspace +@scripting +@connection), and the application's keys", user)
	case ErrUnknownCommand:
		return "use Redis 5 or later (or Valkey), reached directly or through a proxy that passes the command on"
	case ErrNoScript:
		return "connect laraq to the Redis server itself, not through a proxy that sends EVALSHA and EVAL to different servers, and do not disable scripting"
	case ErrWrongType:
		return "the queue is skipped (its jobs stay where they are) and tried again until the key holds its type: look at what wrote it, then rename or delete it; laraq deletes nothing"
	}
	return "check the Redis setup"
}

// IsConfigError reports whether err is, or wraps, a refusal no retry heals (a
// *ConfigError, or a Redis reply ConfigErrorOf would make one of).
func IsConfigError(err error) bool {
	var ce *ConfigError
	return errors.As(err, &ce) || reasonOf(err) != nil
}

// ConfigErrorOf makes err a *ConfigError naming client's server and queue ("" when not
// one queue's) when it is a refusal no retry heals, and returns it unchanged otherwise
// (also when it already holds a *ConfigError).
func ConfigErrorOf(client redis.UniversalClient, queue string, err error) error {
	var ce *ConfigError
	if err == nil || errors.As(err, &ce) {
		return err
	}
	reason := reasonOf(err)
	if reason == nil {
		return err
	}
	ce = &ConfigError{Reason: reason, Server: ServerOf(client), User: userOf(client), Queue: queue, Err: replyOf(err)}
	if reason == ErrNoPermission || reason == ErrUnknownCommand {
		ce.Command = commandIn(ce.Err.Error())
	}
	return ce
}

// queueError is ConfigErrorOf for an operation on queue, which also names the queue's
// key that holds the wrong type (see wrongKey).
func (r *RDB) queueError(ctx context.Context, queue string, err error) error {
	err = ConfigErrorOf(r.client, queue, err)
	var ce *ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	switch ce.Reason {
	case ErrWrongType:
		ce.Key, ce.Type, ce.Want = r.wrongKey(ctx, queue)
	case ErrNoPermission:
		ce.Key = r.keysOf(queue).Queue
	}
	return ce
}

// wrongKey returns the first key of queue whose type (TYPE) is neither its own nor none,
// with that type and the one it must have; "" when every key is right (it was repaired
// meanwhile) or TYPE failed. Only called after a WRONGTYPE: a pipeline of five TYPEs.
func (r *RDB) wrongKey(ctx context.Context, queue string) (key, typ, want string) {
	k := r.keysOf(queue)
	keys := []struct{ key, want string }{
		{k.Queue, "list"}, {k.Delayed, "zset"}, {k.Reserved, "zset"}, {k.Notify, "list"}, {k.Invalid, "list"},
	}
	cmds := make([]*redis.StatusCmd, len(keys))
	_, _ = r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, kw := range keys {
			cmds[i] = p.Type(ctx, kw.key)
		}
		return nil
	})
	for i, kw := range keys {
		if t, err := cmds[i].Result(); err == nil && t != kw.want && t != "none" {
			return kw.key, t, kw.want
		}
	}
	return "", "", ""
}

// codes maps the error codes Redis puts first in a reply to the reason they give.
var codes = map[string]error{
	"READONLY":  ErrReadOnly,
	"CROSSSLOT": ErrCrossSlot,
	"NOPERM":    ErrNoPermission,
	"NOSCRIPT":  ErrNoScript,
	"WRONGTYPE": ErrWrongType,
}

// reasonOf returns the reason a Redis reply gives for a refusal no retry heals, nil for
// any other error.
func reasonOf(err error) error {
	var re redis.Error
	if err == nil || !errors.As(err, &re) {
		return nil
	}
	msg := re.Error()
	code, rest, _ := strings.Cut(msg, " ")
	if reason, ok := codes[code]; ok {
		return reason
	}
	if code != "ERR" {
		return nil
	}
	switch {
	case strings.HasPrefix(rest, "unknown command"):
		return ErrUnknownCommand
	case strings.Contains(rest, "can't run this command or subcommand"):
		return ErrNoPermission
	case strings.HasPrefix(rest, "Error running script"):
		// Redis ≤6: "...: @user_script:N: -READONLY You can't ..." or ": WRONGTYPE ...".
		for c, reason := range codes {
			if strings.Contains(rest, ": -"+c+" ") || strings.Contains(rest, ": "+c+" ") {
				return reason
			}
		}
	}
	return nil
}

// replyOf returns the Redis reply err holds, without the wrapping laraq added.
func replyOf(err error) error {
	var re redis.Error
	if errors.As(err, &re) {
		return re
	}
	return err
}

// commandIn returns the command a reply quotes: 'evalsha' (Redis 6+: "no permissions to
// run the 'evalsha' command", "unknown command 'evalsha'") or `evalsha` (Redis 5 and 6's
// unknown command), or 'config|get' for a subcommand; "" when it quotes none that looks
// like a command name.
func commandIn(msg string) string {
	for _, q := range []string{"'", "`"} {
		if _, rest, ok := strings.Cut(msg, q); ok {
			if name, _, ok := strings.Cut(rest, q); ok && isCommandName(name) {
				return name
			}
		}
	}
	return ""
}

// isCommandName reports whether s can be a command's name: 1 to 64 letters, digits, '|',
// '-' or '_'. Anything else a reply quotes is not put in a message.
func isCommandName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '|' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// scriptLocation is where Redis ≤6 says a script's command failed: "@user_script:1: "
// and "@user_script: 1: ", then a "-" before the command's error code.
var scriptLocation = regexp.MustCompile(`@user_script: ?\d+: -?`)

// shortReply is the first line of a reply without the script's location: the script
// location Redis 7 appends (" script: SHA, on @user_script:N."), the "ERR Error running
// script (call to f_SHA): @user_script:N: " Redis ≤6 puts before the command's error.
func shortReply(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if i := strings.Index(s, " script: "); i >= 0 {
		s = s[:i]
	}
	if strings.HasPrefix(s, "ERR Error running script") {
		if locs := scriptLocation.FindAllStringIndex(s, -1); len(locs) > 0 {
			s = s[locs[len(locs)-1][1]:]
		}
	}
	return strings.TrimSpace(s)
}

// userOf returns the ACL user a client logs in as ("" for the default user). The name is
// not a secret; the password is never read.
func userOf(c redis.UniversalClient) string {
	switch cl := c.(type) {
	case interface{ Options() *redis.Options }:
		return cl.Options().Username
	case *redis.ClusterClient:
		return cl.Options().Username
	}
	return ""
}
