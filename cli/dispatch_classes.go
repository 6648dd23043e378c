package cli

import (
	"fmt"
	"strings"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/phpclass"
)

// `laraq dispatch --classes FILE` dispatches through a Dispatcher given the class facts
// (laraq.WithClasses), which completes the object as PHP holds its class, writes what
// serialize() writes, encrypts a ShouldBeEncrypted class and takes a ShouldBeUnique
// class's lock. What is left here is saying what neither can do as PHP would.

// classCaveats are what laraq cannot do for the class as PHP would, one line each; none
// for a class the manifest lacks (the Dispatcher refuses it).
func classCaveats(m *phpclass.Manifest, class string, rel laraq.Release) []string {
	c := m.Class(class)
	if c == nil {
		return nil
	}
	var out []string
	if mr, err := laraq.ParseRelease(m.Laravel); err == nil && !rel.IsZero() && (mr.Major != rel.Major || mr.Minor != rel.Minor) {
		out = append(out, "the manifest was read from Laravel "+m.Laravel+", the connection is "+rel.String()+": the Queueable properties written are "+m.Laravel+"'s")
	}
	for _, name := range []string{"tries", "backoff", "retryUntil", "displayName"} {
		if mm := c.Method(name); mm != nil && !strings.HasPrefix(mm.DeclaredBy, `Illuminate\`) {
			out = append(out, fmt.Sprintf("%s::%s() is PHP code laraq does not run: the payload's %s is read from the properties only", c.Name, name, metaKey[name]))
		}
	}
	if rel.AtLeast(13, 0, 0) {
		for _, a := range c.Attributes {
			if strings.HasPrefix(a.Name, `Illuminate\Queue\Attributes\`) && phpclass.PayloadAttributes[a.Name] == "" {
				out = append(out, fmt.Sprintf("%s has #[%s], which Laravel 13 reads and laraq dispatch does not", c.Name, a.Name[strings.LastIndexByte(a.Name, '\\')+1:]))
			}
		}
	}
	return out
}

var metaKey = map[string]string{"tries": "maxTries", "backoff": "backoff", "retryUntil": "retryUntil", "displayName": "displayName"}
