// Package secret is the one place laraq hides secrets in what it prints or stores: log
// lines, error messages, failed_jobs exceptions, Horizon records, /metrics and /healthz.
//
// URL takes any URL or DSN a setting can hold (a Redis URL, a failed-job or cache
// database DSN, a --forward target) and returns it with its secrets replaced by Mask:
//
//   - the password of the user information (redis://user:pw@host → redis://user:xxxxx@host);
//     a user without a password is masked whole (https://TOKEN@host → https://xxxxx@host),
//     since that is how tokens travel in URLs, except in database DSNs, where it is the
//     account of a password-less login (postgres://worker@db/shop);
//   - the value of every query parameter whose name says it is a secret (Param):
//     ?password=, ?token=, ?access_token=, ?api_key=, ?X-Amz-Signature=, ...;
//   - the same in go-sql-driver's user:pw@tcp(host)/db form and in the key=value form of
//     libpq DSNs (host=db password=pw).
//
// ParseError describes a url.Parse error without quoting the URL's user information,
// which net/url's messages would repeat.
//
//	log.Info("forwarding jobs", "url", secret.URL("https://bob:pw@hooks.example/run?token=t"))
//	// url=https://bob:xxxxx@hooks.example/run?token=xxxxx
package secret
