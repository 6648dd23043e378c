package secret

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
)

// Mask replaces a secret in what laraq prints: the same five letters Laravel's own
// redaction of database passwords in `php artisan db:show` would not show at all, and
// that laraq has always used.
const Mask = "xxxxx"

// secretWords are the parts of a query parameter or DSN key name that make its value a
// secret. A name matches when it contains one, case-insensitively: "password",
// "db_password", "sslpassword", "token", "access_token", "key", "api_key", "apikey",
// "secret", "client_secret", "signature", "X-Amz-Signature", "sig" (Azure SAS),
// "X-Amz-Credential", "auth", "authorization", "session", "pwd", "passwd", "pass".
// Masking a harmless value by mistake costs a log line some detail; missing a secret
// publishes it.
var secretWords = []string{"pass", "pwd", "secret", "token", "key", "sig", "auth", "credential", "session", "cookie"}

// databaseSchemes name URLs whose lone user is an account name (peer or certificate
// authentication), shown as it is. Elsewhere a lone user is how a token travels
// (https://TOKEN@host), or a password (redis://PASSWORD@host, as some Redis clients read
// it), and is masked.
var databaseSchemes = map[string]bool{"mysql": true, "mariadb": true, "postgres": true, "postgresql": true, "pgsql": true, "sqlsrv": true}

// Param reports whether a query parameter or DSN key of this name holds a secret.
func Param(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// URL returns s with the secrets of its user information and query masked (see the
// package documentation). Text that is no URL comes back unchanged, except that a
// go-sql-driver or key=value DSN has its password masked; text that cannot be parsed but
// holds an "@" (so perhaps user information) is masked whole.
func URL(s string) string {
	if s == "" {
		return s
	}
	if !strings.Contains(s, "://") && !strings.HasPrefix(s, "//") {
		if out, ok := keyValueDSN(s); ok {
			return out
		}
		if at := strings.LastIndex(s, "@"); at > 0 && strings.Contains(s[at:], "(") {
			// go-sql-driver: user:password@tcp(host:port)/db?params
			user, _, _ := strings.Cut(s[:at], ":")
			return maskUser(user, strings.Contains(s[:at], ":")) + "@" + maskQuery(s[at+1:])
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		if strings.Contains(s, "@") {
			return Mask
		}
		return s
	}
	if u.Opaque != "" && strings.Contains(u.Opaque, "@") {
		// "mysql:user:pw@host/db" and other forms url.Parse leaves opaque.
		at := strings.LastIndex(u.Opaque, "@")
		return u.Scheme + ":" + Mask + "@" + maskQuery(u.Opaque[at+1:])
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), Mask)
		} else if u.User.Username() != "" && !databaseSchemes[strings.ToLower(u.Scheme)] {
			u.User = url.User(Mask)
		}
	}
	u.RawQuery = maskRawQuery(u.RawQuery)
	if strings.Contains(u.Fragment, "=") {
		// OAuth implicit flows put access_token=… in the fragment.
		u.RawFragment, u.Fragment = "", maskRawQuery(u.Fragment)
	}
	// url.URL.String escapes the mask's letters nowhere, so the result reads as typed.
	return u.String()
}

// maskUser is the user information of a DSN with its password (or a lone user) masked.
func maskUser(user string, hadPassword bool) string {
	if hadPassword {
		return user + ":" + Mask
	}
	return Mask
}

// maskQuery masks the query part of s (after "?"), if any.
func maskQuery(s string) string {
	base, q, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	return base + "?" + maskRawQuery(q)
}

// maskRawQuery masks the values of secret parameters in a raw query, keeping the order
// and the escaping of everything else.
func maskRawQuery(q string) string {
	if q == "" {
		return q
	}
	parts := strings.Split(q, "&")
	for i, p := range parts {
		k, _, hasValue := strings.Cut(p, "=")
		name, err := url.QueryUnescape(k)
		if err != nil {
			name = k
		}
		if hasValue && Param(name) {
			parts[i] = k + "=" + Mask
		}
	}
	return strings.Join(parts, "&")
}

// keyValueDSN masks a libpq-style "host=db user=u password=pw" DSN; ok is false for
// anything else (every field must be key=value with a plain key).
func keyValueDSN(s string) (string, bool) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return "", false
	}
	for i, f := range fields {
		k, _, ok := strings.Cut(f, "=")
		if !ok || k == "" || strings.ContainsAny(k, ":/@?") {
			return "", false
		}
		if Param(k) {
			fields[i] = k + "=" + Mask
		}
	}
	return strings.Join(fields, " "), true
}

// ParseError describes a url.Parse error of raw without the URL or anything from its
// user information: net/url quotes the offending part, which may be the password.
func ParseError(raw string, err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ee url.EscapeError
	if errors.As(err, &ee) {
		return "invalid %-escape"
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(raw, "//"); ok || strings.Contains(raw, "://") {
		if !ok {
			_, rest, _ = strings.Cut(raw, "://")
		}
		auth := rest
		if i := strings.IndexAny(auth, "/?#"); i >= 0 {
			auth = auth[:i]
		}
		if i := strings.LastIndex(auth, "@"); i >= 0 {
			info := auth[:i]
			for _, part := range append([]string{info}, strings.Split(info, ":")...) {
				if part != "" {
					msg = strings.ReplaceAll(msg, part, Mask)
				}
			}
		}
	}
	if _, q, ok := strings.Cut(raw, "?"); ok {
		for _, p := range strings.Split(q, "&") {
			if k, v, ok := strings.Cut(p, "="); ok && v != "" && Param(k) {
				msg = strings.ReplaceAll(msg, v, Mask)
			}
		}
	}
	return msg
}

// Error returns err's text with every URL in it masked as URL does: for errors of
// libraries that quote the URL they were given (net/http's *url.Error keeps query
// parameters).
func Error(err error, urls ...string) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	for _, raw := range urls {
		if raw == "" {
			continue
		}
		msg = strings.ReplaceAll(msg, raw, URL(raw))
		if u, perr := url.Parse(raw); perr == nil {
			// net/http quotes the URL with its password already replaced by "***".
			msg = strings.ReplaceAll(msg, u.Redacted(), URL(raw))
		}
	}
	return msg
}

// Values lists the secrets a URL or DSN holds, as URL masks them (the password, a lone
// user outside database DSNs, the values of secret parameters), each as written and
// unescaped, so that Scrub can take them out of text others wrote: an HTTP service's
// error page that echoes the request, a driver's message.
func Values(raw string) []string {
	var out []string
	add := func(v string) {
		if len(v) < 3 { // too short to tell from ordinary text; URL masks it where it is
			return
		}
		out = append(out, v)
		if un, err := url.QueryUnescape(v); err == nil && un != v {
			out = append(out, un)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			add(pw)
			add(url.QueryEscape(pw))
			// net/http sends the user information as Basic credentials: an answer that
			// echoes the request shows them so.
			add(base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + pw)))
		} else if !databaseSchemes[strings.ToLower(u.Scheme)] {
			add(u.User.Username())
		}
	}
	for _, q := range []string{u.RawQuery, u.Fragment} {
		for _, p := range strings.Split(q, "&") {
			if k, v, ok := strings.Cut(p, "="); ok && Param(k) {
				add(v)
			}
		}
	}
	return out
}

// Scrub replaces every occurrence of values in text with Mask.
func Scrub(text string, values []string) string {
	for _, v := range values {
		if v != "" {
			text = strings.ReplaceAll(text, v, Mask)
		}
	}
	return text
}
