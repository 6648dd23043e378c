#!/usr/bin/env bash
# scripts/bench-phpser.sh's comparison counted in instructions instead of time: each
# operation runs under valgrind's callgrind, N1 and then N2 times in a fresh process, and
# (instructions of N2 - instructions of N1) / (N2 - N1) is what one operation costs, startup
# left out. Instruction counts do not depend on the other load of a shared machine, so
# they show a change of a few percent that timing on such a machine cannot; they are not
# time (memory stalls, the CPU's parallelism differ between Go and PHP's C), which
# scripts/bench-phpser.sh measures. Go's count moves by up to 10% between runs with the
# concurrent garbage collector's pacing, so each Go figure is the median of ROUNDS runs;
# the last column counts Go with GODEBUG=gcstoptheworld=1, whose collector does the same
# work every run (and less than the concurrent one: no write barriers, no assists).
#
# Usage: scripts/bench-phpser-callgrind.sh [ROUNDS]   (default 3; needs go, php, valgrind)
set -euo pipefail

cd "$(dirname "$0")/.."
rounds="${1:-3}"
n1=3000
n2=13000
fixture=testdata/phpser/fixtures/cases/laravel_job.ser
classes=testdata/phpser/fixtures/classes.php
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

for tool in php valgrind; do
    command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 1; }
done
go test -c -o "$work/phpser.test" ./phpser

cat >"$work/loop.php" <<'PHP'
<?php
// unserialize() or serialize() the fixture N times.
error_reporting(E_ALL & ~E_DEPRECATED);
[$_, $file, $classes, $op, $n] = $argv;
require $classes;
$s = file_get_contents($file);
$v = unserialize($s);
if ($op === 'unserialize') { for ($i = 0; $i < $n; $i++) { unserialize($s); } }
else { for ($i = 0; $i < $n; $i++) { serialize($v); } }
PHP

instructions() { # COMMAND...: the instructions callgrind counts for it
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.out" "$@" >/dev/null 2>"$work/cg.log" ||
        { cat "$work/cg.log" >&2; exit 1; }
    awk '/^(summary|totals):/ { print $2; exit }' "$work/cg.out"
}
per_op() { awk -v a="$1" -v b="$2" -v n="$((n2 - n1))" 'BEGIN { printf "%.0f", (b - a) / n }'; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

php_op() { # unserialize|serialize
    per_op "$(instructions php "$work/loop.php" "$fixture" "$classes" "$1" "$n1")" \
        "$(instructions php "$work/loop.php" "$fixture" "$classes" "$1" "$n2")"
}
go_op() { # benchmark name, GODEBUG
    for ((r = 0; r < rounds; r++)); do
        per_op "$(cd phpser && GODEBUG="$2" instructions "$work/phpser.test" -test.run '^$' -test.bench "^$1\$" -test.benchtime "${n1}x")" \
            "$(cd phpser && GODEBUG="$2" instructions "$work/phpser.test" -test.run '^$' -test.bench "^$1\$" -test.benchtime "${n2}x")"
        echo
    done | median
}

unser=$(php_op unserialize)
ser=$(php_op serialize)
printf 'instructions per operation (callgrind), Go the median of %s runs\n\n' "$rounds"
printf '%-13s %12s   %-12s %12s %8s   %18s %8s\n' "Go" "instr/op" "PHP" "instr/op" "Go/PHP" "gcstoptheworld=1" "Go/PHP"
for pair in Decode:unserialize:$unser DecodeString:unserialize:$unser Unmarshal:unserialize:$unser Marshal:serialize:$ser; do
    IFS=: read -r bench op php <<<"$pair"
    go=$(go_op "Benchmark$bench" asyncpreemptoff=1)
    stw=$(go_op "Benchmark$bench" asyncpreemptoff=1,gcstoptheworld=1)
    ratio() { awk -v g="$1" -v p="$php" 'BEGIN { printf "%.2f", g / p }'; }
    printf '%-13s %12s   %-12s %12s %8s   %18s %8s\n' "$bench" "$go" "$op" "$php" "$(ratio "$go")" "$stw" "$(ratio "$stw")"
done
