package laravel

import "strings"

// inferVersion guesses the major version of the skeleton an application was created
// from by the keys of its .env, for when no framework is at hand. Each skeleton's
// .env.example names the settings its config files read, and those were renamed over
// time:
//
//	5.8–8.x   CACHE_DRIVER, BROADCAST_DRIVER, FILESYSTEM_DRIVER (8.x), MIX_* (Laravel Mix)
//	9.x       FILESYSTEM_DISK replaces FILESYSTEM_DRIVER; VITE_* replaces MIX_* from 9.19
//	10.x      as late 9.x (CACHE_DRIVER, FILESYSTEM_DISK, VITE_*)
//	11.x+     CACHE_STORE, BROADCAST_CONNECTION, APP_MAINTENANCE_DRIVER, BCRYPT_ROUNDS,
//	          APP_LOCALE, LOG_STACK …
//
// What the version decides here (the cache prefix suffix and the ":" after it) is the
// same for 9.x and 10.x and for 5.8–8.x, so the guess only has to tell those groups and
// 11.x apart. A key only 11.x+ configuration files read wins, since upgrading to 11.x
// means renaming CACHE_DRIVER to CACHE_STORE; keys an application of any version may add
// (APP_LOCALE, BCRYPT_ROUNDS) count only when no older key is there. With the old keys
// alone the guess is 8, whose cache keys 5.8–7.x share, unless FILESYSTEM_DISK or VITE_*
// say 9.x or later (10 then: 9.x and 10.x keys are the same). keys are the names in the
// file, in order; evidence lists the ones the guess rests on. 0: nothing to go by.
func inferVersion(keys []string) (version int, evidence []string) {
	has := map[string]bool{}
	var mix, vite string // first MIX_* and VITE_* key
	for _, k := range keys {
		has[k] = true
		if mix == "" && strings.HasPrefix(k, "MIX_") {
			mix = k
		}
		if vite == "" && strings.HasPrefix(k, "VITE_") {
			vite = k
		}
	}
	pick := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if n != "" && has[n] {
				out = append(out, n)
			}
		}
		return out
	}
	if e := pick("CACHE_STORE", "BROADCAST_CONNECTION", "APP_MAINTENANCE_DRIVER"); len(e) > 0 {
		return 11, e
	}
	old := pick("CACHE_DRIVER", "BROADCAST_DRIVER", "FILESYSTEM_DRIVER", "FILESYSTEM_DISK", mix)
	switch {
	case has["FILESYSTEM_DRIVER"]:
		return 8, old
	case has["FILESYSTEM_DISK"] && mix != "":
		return 9, old
	case has["FILESYSTEM_DISK"]:
		return 10, append(old, pick(vite)...)
	case mix != "":
		return 8, old
	case len(old) > 0 && vite != "":
		return 10, append(old, vite)
	case len(old) > 0:
		return 8, old
	}
	if e := pick("APP_MAINTENANCE_STORE", "APP_LOCALE", "APP_FALLBACK_LOCALE", "APP_FAKER_LOCALE", "BCRYPT_ROUNDS", "LOG_STACK", "PHP_CLI_SERVER_WORKERS"); len(e) > 0 {
		return 11, e
	}
	return 0, nil
}
