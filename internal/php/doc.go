// Package php holds PHP's own semantics where laraq must reproduce them byte for byte:
// float formatting (serialize_precision -1 and the (string) cast), the (int) cast,
// is_numeric, htmlentities() with HTML 4.01's entity table, and Laravel's Str::slug /
// Str::ascii with voku/portable-ascii's table.
//
// Each function names the PHP construct it mirrors; the tests compare them with real PHP.
// The transliteration and entity tables are generated from PHP:
//
//	go generate ./internal/php
package php

//go:generate go test -run TestASCIITableMatchesPHP -update-ascii .
//go:generate go test -run TestHTMLEntityTableMatchesPHP -update-htmlentities .
