#!/usr/bin/env bash
# The pop's cost to Redis counted in instructions: redis-server runs under valgrind's
# callgrind, and for each measurement the server's instructions are zeroed, the job runs,
# and the server's count is read (callgrind_control). Measured on JOBS Laravel no-op jobs:
#
#   yardstick   Laravel's own pop effect looped inside script calls of 100 jobs
#               (rdb.LaravelPopEffect), the least Redis can do per job
#   pop, B      the worker's ticketed pop (rdb.PopTicket), B jobs per call, for each B of
#               BATCHES: what a worker popping B jobs at a time costs the server per job,
#               the request's parsing and the reply's writing included
#
# Instruction counts do not depend on the other load of a shared machine, which moves
# INFO commandstats' script time (scripts/bench-worker.sh's measure) by a third between
# runs; they are not time. A worker at concurrency 64 pops about 16 jobs per call in a
# drain (bench-worker.sh's "scripts per job").
#
# Usage: scripts/bench-pop-callgrind.sh [JOBS [BATCHES]]   (default 5000 "1 4 8 16 64";
# needs go, redis-server, redis-cli, valgrind)
set -euo pipefail

cd "$(dirname "$0")/.."
jobs="${1:-5000}"
batches="${2:-1 4 8 16 64}"
prefix=laravel_database_

# The entry point, one variable each.
BENCH_PKG=./internal/bench
BENCH_TEST=TestBenchProcess

work="$(mktemp -d)"
pid=""
cleanup() {
    if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

for tool in go redis-server redis-cli valgrind callgrind_control; do
    command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 1; }
done
go test -c -o "$work/bench.test" "$BENCH_PKG"

port=$((20000 + RANDOM % 30000))
valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p" \
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
pid=$!
for _ in $(seq 1 200); do
    if redis-cli -p "$port" ping >/dev/null 2>&1; then break; fi
    kill -0 "$pid" 2>/dev/null || { cat "$work/redis.log" >&2; exit 1; }
    sleep 0.1
done

bench_mode() { # MODE QUEUE [VAR=value...]
    local mode=$1 queue=$2
    shift 2
    env LARAQ_BENCH_REDIS="127.0.0.1:$port" LARAQ_BENCH_PREFIX="$prefix" LARAQ_BENCH_MODE="$mode" \
        LARAQ_BENCH_QUEUE="$queue" LARAQ_BENCH_N="$jobs" "$@" \
        "$work/bench.test" -test.run "^$BENCH_TEST\$" | grep '=' || { echo "$mode on $queue failed" >&2; exit 1; }
}
per_job() { # MODE QUEUE [VAR=value...]: fill QUEUE, then the server's instructions per job of MODE
    local mode=$1 queue=$2 out n
    shift 2
    bench_mode fill "$queue" >/dev/null
    callgrind_control -z "$pid" >/dev/null 2>&1
    out=$(bench_mode "$mode" "$queue" "$@")
    # Dumps are numbered cg.PID.1, .2, ...: the newest is the one just written.
    local before
    before=$(ls "$work" | grep -c "^cg\.$pid\." || true)
    callgrind_control -d "$pid" >/dev/null 2>&1
    n=$(echo "$out" | sed -n 's/.*\<jobs=\([0-9]*\).*/\1/p')
    [[ "$n" == "$jobs" ]] || { echo "$mode took $n of $jobs jobs" >&2; exit 1; }
    awk -v n="$n" '/^(summary|totals):/ { printf "%.0f\n", $2 / n; exit }' "$work/cg.$pid.$((before + 1))"
}

yard=$(per_job yardstick yard)
echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/') under callgrind, $jobs jobs per measurement"
printf '%-34s %14s %12s\n' "" "instr/job" "vs yardstick"
printf '%-34s %14s %12s\n' "Laravel's pop effect (yardstick)" "$yard" "1.00x"
for b in $batches; do
    ir=$(per_job pops "pop$b" LARAQ_BENCH_BATCH="$b")
    printf '%-34s %14s %11.2fx\n' "laraq's pop, $b jobs per call" "$ir" "$(awk -v a="$ir" -v b="$yard" 'BEGIN { print a / b }')"
done
