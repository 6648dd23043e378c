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
