package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/cli"
)

// TestDemo runs `laraq demo` (miniredis, recorded Laravel 8 payloads, the example
// handlers) and checks what it reports: every job ran by Laravel's rules and Redis is
// empty at the end.
func TestDemo(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if rc := cli.Main(ctx, []string{"demo"}, cli.WithIO(bytes.NewReader(nil), &stdout, &stderr), cli.WithCommand(demoCommand)); rc != 0 {
		t.Fatalf("demo exit %d\n%s\n%s", rc, stdout.String(), stderr.String())
	}
	out := stdout.String()
	const summary = "Summary: 9 jobs in 10 attempts: 8 done, 1 failed, 1 released for a retry; 0 keys left in Redis.\n"
	if !strings.HasSuffix(out, summary) {
		t.Errorf("summary missing:\n%s", out)
	}
	for _, want := range []*regexp.Regexp{
		// The retried job: FAIL (released after an exception), then DONE on attempt 2.
		regexp.MustCompile(`(?s)App\\Jobs\\PlainJob \.+ [0-9.]+ms FAIL\n.*attempt 2 of .*App\\Jobs\\PlainJob \.+ [0-9.]+ms DONE\n`),
		regexp.MustCompile(`App\\Models\\User #3 on connection laraq_models, note "welcome"`),
		regexp.MustCompile(`protected prot=7, private priv=\[1 map\[a:<nil>\]\]`),
		regexp.MustCompile(`(?s)chain step 1.*chain step 2.*chain step 3`),
		regexp.MustCompile(`Named: nightly export \.+ [0-9.]+ms DONE\n`),
		regexp.MustCompile(`\| [0-9a-f-]{36} \| redis +\| default \| App\\Jobs\\NumbersJob \| \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \|`),
	} {
		if !want.MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}
