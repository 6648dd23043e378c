package secret

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                                   "",
		"redis://127.0.0.1:6379/0":           "redis://127.0.0.1:6379/0",
		"redis://user:pw@h:1/0":              "redis://user:xxxxx@h:1/0",
		"rediss://:pw@h:1/0":                 "rediss://:xxxxx@h:1/0",
		"https://ghp_TOKEN@github.example/x": "https://xxxxx@github.example/x",
		"http://bob:pw@hooks.example/run?token=t&q=1":                         "http://bob:xxxxx@hooks.example/run?token=xxxxx&q=1",
		"https://h/x?X-Amz-Signature=abc&X-Amz-Credential=k%2Fv&X-Amz-Date=1": "https://h/x?X-Amz-Signature=xxxxx&X-Amz-Credential=xxxxx&X-Amz-Date=1",
		"https://h/cb#access_token=abc&state=1":                               "https://h/cb#access_token=xxxxx&state=1",
		"postgres://u@h/db?sslpassword=pw&sslmode=require":                    "postgres://u@h/db?sslpassword=xxxxx&sslmode=require",
		"mysql://u:p%40ss@h/db":                                               "mysql://u:xxxxx@h/db",
		"sqlite:/var/db/failed.sqlite":                                        "sqlite:/var/db/failed.sqlite",
		"null":                                                                "null",
		"u:pw@tcp(127.0.0.1:3306)/db?password=x":                              "u:xxxxx@tcp(127.0.0.1:3306)/db?password=xxxxx",
		"host=db user=u password=pw sslmode=require":                          "host=db user=u password=xxxxx sslmode=require",
		"http://h/x?api_key=k&apikey=k2&secret=s&sig=z&auth=a":                "http://h/x?api_key=xxxxx&apikey=xxxxx&secret=xxxxx&sig=xxxxx&auth=xxxxx",
		"redis://u:hunter2%zz@h:1/0":                                          "xxxxx",
		"mysql:u:pw@h/db":                                                     "mysql:xxxxx@h/db",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParam(t *testing.T) {
	for _, n := range []string{"password", "PASSWORD", "db_password", "token", "access_token", "key", "API_KEY", "secret", "signature", "X-Amz-Signature", "pwd", "passwd", "auth"} {
		if !Param(n) {
			t.Errorf("%q is not a secret", n)
		}
	}
	for _, n := range []string{"db", "database", "sslmode", "queue", "timeout", "charset"} {
		if Param(n) {
			t.Errorf("%q is a secret", n)
		}
	}
}

func TestParseErrorDoesNotQuote(t *testing.T) {
	for _, raw := range []string{"redis://u:hunter2%zz@h:1/0", "redis://hunter2@h:port/0", "redis://u:hunter2@h:9x/0?token=hunter2"} {
		_, err := url.Parse(raw)
		if err == nil {
			continue
		}
		if msg := ParseError(raw, err); strings.Contains(msg, "hunter2") {
			t.Errorf("ParseError(%q) = %q", raw, msg)
		}
	}
}

func TestError(t *testing.T) {
	raw := "http://bob:pw42@127.0.0.1:1/hook?token=tk42"
	u, _ := url.Parse(raw)
	err := &url.Error{Op: "Post", URL: u.Redacted(), Err: errors.New("connection refused")}
	msg := Error(err, raw)
	if strings.Contains(msg, "pw42") || strings.Contains(msg, "tk42") || !strings.Contains(msg, "connection refused") {
		t.Errorf("Error = %q", msg)
	}
}

func FuzzURL(f *testing.F) {
	for _, s := range []string{"redis://u:pw@h/0", "http://h/?token=t", "u:pw@tcp(h)/db", "host=h password=p", "%zz@", "//u:p@h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := URL(s)
		// A password between ":" and "@" of a parsed URL never survives.
		if u, err := url.Parse(s); err == nil && u.User != nil {
			if pw, ok := u.User.Password(); ok && len(pw) > 5 && strings.Contains(out, pw) && !strings.Contains(u.Host+u.Path+u.RawQuery+u.Fragment+u.User.Username(), pw) {
				t.Errorf("URL(%q) = %q keeps the password", s, out)
			}
		}
	})
}

func TestValuesAndScrub(t *testing.T) {
	raw := "http://bob:p%40ss42@h/x?token=tk%2F42&q=1"
	text := "GET /x?token=tk%2F42 by bob:p@ss42 (tk/42, p%40ss42)"
	got := Scrub(text, Values(raw))
	for _, s := range []string{"tk%2F42", "p@ss42", "tk/42", "p%40ss42"} {
		if strings.Contains(got, s) {
			t.Errorf("Scrub left %q in %q", s, got)
		}
	}
	if !strings.Contains(got, "bob") {
		t.Errorf("Scrub took the user too: %q", got)
	}
}
