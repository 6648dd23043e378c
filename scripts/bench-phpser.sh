#!/usr/bin/env bash
# Compares phpser with PHP's own C implementation on the same 1,992-byte Laravel
# command (testdata/phpser/fixtures/cases/laravel_job.ser), in one run:
#   Go:  BenchmarkDecode, BenchmarkDecodeString (no input copy), BenchmarkUnmarshal,
#        BenchmarkMarshal (go test -bench)
#   PHP: unserialize() and serialize() of the same bytes, timed with hrtime()
# Both sides run ROUNDS times, interleaved, and the medians are compared, so that a
# busy machine slows both alike. Prints ns/op, B/op and allocs/op for Go, ns/op for
# PHP, and the Go/PHP ratio per operation, then the targets: Decode <= 0.8x unserialize,
# Unmarshal <= 1.2x unserialize, Marshal <= 1.0x serialize (DecodeString, Decode without
# the input's copy, is shown but has no target of its own). With BENCH_TARGETS=FILE the
# targets are also appended to FILE as "name|value|limit|verdict" lines (scripts/bench.sh).
#
# Usage: scripts/bench-phpser.sh [ROUNDS]    (default 5; needs go and php)
# GOMAXPROCS=1 scripts/bench-phpser.sh runs Go on one core like PHP, so that the
# garbage collector's work is part of the time measured.
set -euo pipefail

cd "$(dirname "$0")/.."
rounds="${1:-${ROUNDS:-5}}"
fixture=testdata/phpser/fixtures/cases/laravel_job.ser
classes=testdata/phpser/fixtures/classes.php
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

command -v php >/dev/null || { echo "php not found (apt-get install php-cli)" >&2; exit 1; }

go test -c -o "$work/phpser.test" ./phpser

cat >"$work/bench.php" <<'PHP'
<?php
// Times unserialize() and serialize() of one payload; prints "op ns_per_op".
error_reporting(E_ALL & ~E_DEPRECATED);
[$_, $file, $classes] = $argv;
require $classes;   // the job's classes exist, as in a real worker
$s = file_get_contents($file);
$v = unserialize($s);
if (serialize($v) !== $s) { fwrite(STDERR, "serialize() does not give back the input\n"); exit(1); }
function timeit(callable $f, int $n): float {
    $f(); $f();
    $t = hrtime(true);
    for ($i = 0; $i < $n; $i++) { $f(); }
    return (hrtime(true) - $t) / $n;
}
$n = 100000;
printf("unserialize %.0f\n", timeit(function () use ($s) { unserialize($s); }, $n));
printf("serialize %.0f\n", timeit(function () use ($v) { serialize($v); }, $n));
PHP

: >"$work/go.txt"
: >"$work/php.txt"
for ((r = 1; r <= rounds; r++)); do
    (cd phpser && "$work/phpser.test" -test.run '^$' -test.bench '^Benchmark(Decode|DecodeString|Unmarshal|Marshal)$' \
        -test.benchmem -test.benchtime 1s) | grep '^Benchmark' >>"$work/go.txt"
    php "$work/bench.php" "$fixture" "$classes" >>"$work/php.txt"
done

median() { sort -n | awk '{a[NR]=$1} END {if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
gostat() { # benchmark name -> "ns/op B/op allocs/op" per round
    grep -E "^Benchmark$1(-[0-9]+)?[[:space:]]" "$work/go.txt" | awk '{
        for (i = 1; i <= NF; i++) { if ($i == "ns/op") ns = $(i-1); if ($i == "B/op") b = $(i-1); if ($i == "allocs/op") a = $(i-1) }
        print ns, b, a }'
}
phpstat() { grep "^$1 " "$work/php.txt" | awk '{print $2}' | median; }

php_unser=$(phpstat unserialize)
php_ser=$(phpstat serialize)
printf '%s rounds, payload %s bytes, %s\n\n' "$rounds" "$(wc -c <"$fixture" | tr -d ' ')" "$(php -r 'echo "PHP ", PHP_VERSION;') / $(go version | awk '{print $3}')"
printf '%-13s %12s %10s %10s   %-12s %12s %8s\n' "Go" "ns/op" "B/op" "allocs/op" "PHP" "ns/op" "Go/PHP"
declare -A ratio
row() { # go benchmark, php op, php ns
    local ns b a
    ns=$(gostat "$1" | awk '{print $1}' | median)
    b=$(gostat "$1" | awk '{print $2}' | median)
    a=$(gostat "$1" | awk '{print $3}' | median)
    ratio[$1]=$(awk -v g="$ns" -v p="$3" 'BEGIN {printf "%.2f", g / p}')
    printf '%-13s %12.0f %10.0f %10.0f   %-12s %12.0f %8s\n' "$1" "$ns" "$b" "$a" "$2" "$3" "${ratio[$1]}"
}
row Decode unserialize "$php_unser"
row DecodeString unserialize "$php_unser"
row Unmarshal unserialize "$php_unser"
row Marshal serialize "$php_ser"

echo
printf '%-56s %12s %12s  %s\n' "target" "value" "limit" ""
target() { # NAME VALUE LIMIT
    local verdict=MISSED
    if awk -v x="$2" -v y="$3" 'BEGIN { exit !(x <= y) }'; then verdict=met; fi
    printf '%-56s %12s %12s  %s\n' "$1" "$2x" "<= $3x" "$verdict"
    if [[ -n "${BENCH_TARGETS:-}" ]]; then echo "$1|$2x|<= $3x|$verdict" >>"$BENCH_TARGETS"; fi
}
target "phpser Decode / PHP unserialize" "${ratio[Decode]}" 0.8
target "phpser Unmarshal (into a struct) / PHP unserialize" "${ratio[Unmarshal]}" 1.2
target "phpser Marshal / PHP serialize" "${ratio[Marshal]}" 1.0
