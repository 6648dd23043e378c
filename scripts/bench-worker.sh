#!/usr/bin/env bash
# The worker against its yardsticks, all on one redis-server started here, in one run:
#
#   PHP        one `php artisan queue:work` process (Laravel 8.83's own Worker,
#              testdata/php/work.php) draining PHP_JOBS no-op jobs (App\Jobs\Noop)
#   yardstick  Laravel's own pop effect (LPOP, cjson decode, attempts+1, encode, ZADD
#              :reserved, LPOP :notify) looped over JOBS jobs inside script calls of 100
#              (internal/rdb/laravel_pop.lua): the least script time a pop costs here
#   laraq      the Go worker draining JOBS jobs at concurrency 64 and 256, each in a
#              process of its own
#   asynq      github.com/hibiken/asynq v0.26.0 draining JOBS no-op tasks carrying the same
#              payload bytes, at concurrency 32 and 64 (internal/bench/asynq, a module of
#              its own so that laraq never requires asynq)
#   latency    LATENCY_JOBS jobs pushed one at a time, 2 ms apart, to an idle Go worker
#              with block_for set: push-to-handler p50/p99
#
# Every run measures, per job: jobs/s; the worker process' CPU (user+sys, getrusage); the
# server's CPU (INFO cpu used_cpu_user+sys); the script time (INFO commandstats EVAL +
# EVALSHA usec: "pop script time per job"); commands (scripts' own included) and Go
# allocations; and the process' peak RSS. Each round runs everything once; the ratios
# (laraq over the yardstick, over asynq, over PHP) are taken within a round, and the table
# shows the median of the rounds, so that a shared machine's drifting speed moves both
# sides of a ratio alike.
#
# Ends with the issue's targets (value, limit, met/MISSED); with BENCH_TARGETS=FILE they
# are also appended to FILE as "name|value|limit|verdict" lines (scripts/bench.sh).
#
# Usage: scripts/bench-worker.sh [JOBS [ROUNDS]]   (default 50000 5; ROUNDS=1 for a quick look)
# Environment: PHP_JOBS (default JOBS), LATENCY_JOBS (default 2000), BENCH_PROFILE=DIR
# writes a CPU and an allocation profile of each laraq drain of the last round to DIR
# (go tool pprof). Needs go, php (scripts/install-peers.sh), redis-server, redis-cli.
set -euo pipefail

cd "$(dirname "$0")/.."
jobs="${1:-${JOBS:-50000}}"
rounds="${2:-${ROUNDS:-5}}"
php_jobs="${PHP_JOBS:-$jobs}"
latency_jobs="${LATENCY_JOBS:-2000}"
profile_dir="${BENCH_PROFILE:-}"
prefix=laravel_database_

# The entry points, one variable each.
BENCH_PKG=./internal/bench        # its test binary's BENCH_TEST does fill, drain, yardstick, latency
BENCH_TEST=TestBenchProcess
ASYNQ_DIR=internal/bench/asynq    # the asynq module's main package
PHP_WORKER=testdata/php/work.php

work="$(mktemp -d)"
redis_pid=""
cleanup() {
    if [[ -n "$redis_pid" ]]; then kill "$redis_pid" 2>/dev/null || true; wait "$redis_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

for tool in go php redis-server redis-cli; do
    command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 1; }
done

# A free port: try random ones until a server answers.
for _ in $(seq 1 20); do
    port=$((20000 + RANDOM % 30000))
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" >"$work/redis.log" 2>&1 &
    redis_pid=$!
    for _ in $(seq 1 50); do
        if redis-cli -p "$port" ping >/dev/null 2>&1; then break 2; fi
        if ! kill -0 "$redis_pid" 2>/dev/null; then break; fi
        sleep 0.05
    done
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
    redis_pid=""
done
[[ -n "$redis_pid" ]] || { echo "could not start redis-server" >&2; exit 1; }

go test -c -o "$work/bench.test" "$BENCH_PKG"
(cd "$ASYNQ_DIR" && go build -o "$work/asynq" .)

bench_mode() { # MODE QUEUE [VAR=value...]: one BENCH_TEST process; prints its output line
    local mode=$1 queue=$2
    shift 2
    env LARAQ_BENCH_REDIS="127.0.0.1:$port" LARAQ_BENCH_PREFIX="$prefix" LARAQ_BENCH_MODE="$mode" \
        LARAQ_BENCH_QUEUE="$queue" LARAQ_BENCH_N="$jobs" "$@" \
        "$work/bench.test" -test.run "^$BENCH_TEST\$" | grep '=' || { echo "$mode on $queue failed" >&2; exit 1; }
}
field() { sed -n "s/.*\<$1=\([-0-9.]*\).*/\1/p"; } # KEY, reading a name=value line
check_jobs() { # WHAT WANT LINE
    local n
    n=$(echo "$3" | field jobs)
    [[ "$n" == "$2" ]] || { echo "$1 processed $n of $2 jobs: $3" >&2; exit 1; }
}

# redis_usage: "cpu_seconds commands" of the server (commands without INFO).
redis_usage() {
    redis-cli -p "$port" info all | tr -d '\r' | awk -F'[:=,]' '
        /^used_cpu_(user|sys):/ { cpu += $2 }
        /^cmdstat_/ && $1 != "cmdstat_info" { cmds += $3 }
        END { printf "%.6f %d\n", cpu, cmds }'
}
# children_cpu FILE: the user+sys seconds of this shell's finished children, written to FILE
# (`times` must run in this shell, not in a subshell, which has no children yet).
children_cpu() {
    times >"$1"
    tail -n 1 "$1" | awk '{ for (i = 1; i <= 2; i++) { split($i, t, /[ms]/); s += t[1] * 60 + t[2] } printf "%.3f\n", s }' >"$1.s"
}

php_run() { # -> a line like the drains'
    bench_mode fill php LARAQ_BENCH_N="$php_jobs" >/dev/null
    local c0 k0 c1 k1 p0 p1 start end done
    read -r c0 k0 < <(redis_usage)
    children_cpu "$work/cpu0"
    start=$(date +%s.%N)
    LARAQ_REDIS_PORT="$port" LARAQ_REDIS_PREFIX="$prefix" \
        php "$PHP_WORKER" --queue=php --stop-when-empty --sleep=0 >"$work/php.out"
    end=$(date +%s.%N)
    children_cpu "$work/cpu1"
    p0=$(cat "$work/cpu0.s") p1=$(cat "$work/cpu1.s")
    read -r c1 k1 < <(redis_usage)
    done=$(grep -c 'Processed:' "$work/php.out" || true)
    awk -v n="$done" -v a="$start" -v b="$end" -v c0="$c0" -v c1="$c1" -v k0="$k0" -v k1="$k1" -v p0="$p0" -v p1="$p1" 'BEGIN {
        printf "jobs=%d seconds=%.3f jobs_per_sec=%.0f go_cpu_us=%.2f redis_cpu_us=%.2f cmds=%.2f\n",
            n, b - a, n / (b - a), (p1 - p0) * 1e6 / n, (c1 - c0) * 1e6 / n, (k1 - k0 - 1) / n }'
}

go_run() { # CONCURRENCY ROUND
    local q="go$1r$2" extra=()
    bench_mode fill "$q" >/dev/null
    if [[ -n "$profile_dir" && "$2" == "$rounds" ]]; then
        mkdir -p "$profile_dir"
        extra=(LARAQ_BENCH_CPUPROFILE="$profile_dir/drain-c$1.cpu" LARAQ_BENCH_MEMPROFILE="$profile_dir/drain-c$1.allocs")
    fi
    bench_mode drain "$q" LARAQ_BENCH_CONCURRENCY="$1" "${extra[@]}"
}

yardstick_run() { # ROUND
    bench_mode fill "y$1" >/dev/null
    bench_mode yardstick "y$1"
}

asynq_run() { # CONCURRENCY ROUND
    local q="asynq$1r$2"
    "$work/asynq" -redis "127.0.0.1:$port" -mode fill -n "$jobs" -queue "$q" -payload "$work/payload.json" >/dev/null
    "$work/asynq" -redis "127.0.0.1:$port" -mode drain -n "$jobs" -queue "$q" -concurrency "$1"
}

# asynq's tasks carry the bytes of one Laravel no-op job, as laraq's do.
bench_mode fill sample LARAQ_BENCH_N=1 >/dev/null
redis-cli -p "$port" --raw lpop "${prefix}queues:sample" | head -c -1 >"$work/payload.json"

for ((r = 1; r <= rounds; r++)); do
    echo "round $r of $rounds ..." >&2
    php_run >"$work/$r.php"
    check_jobs "PHP" "$php_jobs" "$(cat "$work/$r.php")"
    yardstick_run "$r" >"$work/$r.yard"
    check_jobs "the yardstick" "$jobs" "$(cat "$work/$r.yard")"
    for c in 64 256; do
        go_run "$c" "$r" >"$work/$r.go$c"
        check_jobs "laraq c=$c" "$jobs" "$(cat "$work/$r.go$c")"
    done
    for c in 32 64; do
        asynq_run "$c" "$r" >"$work/$r.asynq$c"
        check_jobs "asynq c=$c" "$jobs" "$(cat "$work/$r.asynq$c")"
    done
    bench_mode latency "lat$r" LARAQ_BENCH_N="$latency_jobs" >"$work/$r.lat"
done

# median KIND KEY: the median over the rounds of KEY in each round's KIND line.
median_of() { for ((r = 1; r <= rounds; r++)); do field "$2" <"$work/$r.$1"; done | median; }
median() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
# per_round EXPR: an awk expression of one round's values, named KIND_KEY (e.g.
# go64_jobs_per_sec / yard_script_us), evaluated for each round, one line each.
per_round() {
    local expr=$1
    for ((r = 1; r <= rounds; r++)); do
        local vars=()
        for kind in php yard go64 go256 asynq32 asynq64 lat; do
            for key in jobs_per_sec script_us go_cpu_us redis_cpu_us vmhwm_kb p99_ms; do
                local v
                v=$(field "$key" <"$work/$r.$kind")
                vars+=(-v "${kind}_${key}=${v:-0}")
            done
        done
        awk "${vars[@]}" "BEGIN { printf \"%.4f\\n\", $expr }"
    done
}

row() { # LABEL KIND
    local k=$2
    printf '%-34s %9.0f %9s %9s %9s %9s %8s %8s %8s\n' "$1" "$(median_of "$k" jobs_per_sec)" \
        "$(median_of "$k" go_cpu_us)" "$(median_of "$k" redis_cpu_us)" "$(median_of "$k" script_us)" \
        "$(median_of "$k" script_calls)" "$(median_of "$k" cmds)" "$(median_of "$k" allocs)" \
        "$(awk -v kb="$(median_of "$k" vmhwm_kb)" 'BEGIN { if (kb == "nan" || kb == "") print "-"; else printf "%.1f", kb / 1024 }')"
}

echo
echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), $(nproc) CPUs, $jobs jobs per run ($php_jobs for PHP), median of $rounds rounds"
printf '%-34s %9s %9s %9s %9s %9s %8s %8s %8s\n' "" "jobs/s" "worker" "Redis" "script" "scripts" "cmds" "allocs" "peak RSS"
printf '%-34s %9s %9s %9s %9s %9s %8s %8s %8s\n' "" "" "CPU us/job" "CPU us/job" "us/job" "per job" "per job" "per job" "MB"
row "PHP queue:work (1 process)" php
row "Laravel's pop effect (yardstick)" yard
row "laraq, concurrency 64" go64
row "laraq, concurrency 256" go256
row "asynq v0.26.0, concurrency 32" asynq32
row "asynq v0.26.0, concurrency 64" asynq64
echo "(worker CPU: the worker process' user+sys; PHP's is queue:work's. script: EVAL+EVALSHA usec in"
echo " INFO commandstats, the time Redis spent in scripts, their own commands included)"
echo
echo "pickup latency with block_for ($latency_jobs jobs 2 ms apart): p50 $(median_of lat p50_ms) ms, p99 $(median_of lat p99_ms) ms"

# --- targets (issue 22) ---
: "${BENCH_TARGETS:=}"
rows=()
target() { # NAME EXPR OP LIMIT UNIT: the median of EXPR over the rounds against LIMIT
    local values value range verdict
    values=$(per_round "$2")
    value=$(echo "$values" | median)
    range=$(echo "$values" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }')
    if awk -v x="$value" -v op="$3" -v y="$4" 'BEGIN { exit !(x != "nan" && ((op == ">=") ? x >= y : (op == "<=") ? x <= y : x < y)) }'; then
        verdict=met
    else
        verdict=MISSED
    fi
    value=$(awk -v x="$value" 'BEGIN { printf "%.2f", x }')
    rows+=("$1|$value$5|$3 $4$5|$verdict|$range")
    if [[ -n "$BENCH_TARGETS" ]]; then echo "$1|$value$5|$3 $4$5|$verdict" >>"$BENCH_TARGETS"; fi
}
best_asynq='(asynq32_jobs_per_sec > asynq64_jobs_per_sec ? asynq32_jobs_per_sec : asynq64_jobs_per_sec)'
target "pop script time per job / Laravel's pop effect, c=64" 'go64_script_us / yard_script_us' "<=" 1.2 x
target "pop script time per job / Laravel's pop effect, c=256" 'go256_script_us / yard_script_us' "<=" 1.2 x
target "Go CPU per job, c=64" 'go64_go_cpu_us' "<=" 15 " us"
target "throughput / ceiling (1e6 / pop effect us), c=256" 'go256_jobs_per_sec * yard_script_us / 1e6' ">=" 0.7 ""
target "throughput / ceiling (1e6 / pop effect us), c=64" 'go64_jobs_per_sec * yard_script_us / 1e6' ">=" 0.6 ""
target "throughput c=64 / asynq (best of c=32, c=64)" "go64_jobs_per_sec / $best_asynq" ">=" 5 x
target "throughput c=64 / one PHP worker" 'go64_jobs_per_sec / php_jobs_per_sec' ">=" 30 x
target "pickup p99 with block_for" 'lat_p99_ms' "<" 1 " ms"
target "peak RSS at c=256" 'go256_vmhwm_kb / 1024' "<=" 30 " MB"

echo
printf '%-56s %12s %12s  %-7s %s\n' "target (median of $rounds rounds)" "value" "limit" "" "rounds' range"
for row in "${rows[@]}"; do
    IFS='|' read -r name value limit verdict range <<<"$row"
    printf '%-56s %12s %12s  %-7s %s\n' "$name" "$value" "$limit" "$verdict" "$range"
done
