package rdb

import (
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// IsOutOfMemory reports whether err is Redis refusing a write because it is at
// maxmemory with the noeviction policy: "OOM command not allowed when used memory >
// 'maxmemory'." The refused command did nothing. For a script that holds too: Redis
// refuses a script's write only while the script has written nothing yet (a later
// write would break its atomicity and is let through), and the refusal ends the script,
// so a pop refused for memory reserved no job and has no reply to ask for again. It
// heals when memory is freed.
func IsOutOfMemory(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "OOM ")
}

// RefusesPops reports whether err is Redis answering but refusing the writes a pop
// makes: out of memory (IsOutOfMemory) or a read-only replica (ErrReadOnly, a failover
// in progress or a worker pointed at a replica). A PING still succeeds meanwhile, so
// that it does not say the worker can take jobs again.
func RefusesPops(err error) bool {
	return IsOutOfMemory(err) || errors.Is(err, ErrReadOnly) || reasonOf(err) == ErrReadOnly
}
