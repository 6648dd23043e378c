// Package php holds PHP's own semantics where laraq must reproduce them byte for byte:
// float formatting (serialize_precision -1 and the (string) cast), the (int) cast,
// is_numeric, and Laravel's Str::slug / Str::ascii with voku/portable-ascii's table.
//
// Each function names the PHP construct it mirrors; the tests compare them with real PHP.
// The transliteration table is generated from PHP:
//
//	go generate ./internal/php
package php

//go:generate go test -run TestASCIITableMatchesPHP -update-ascii .
