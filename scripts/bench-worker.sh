#!/usr/bin/env bash
# Compares the Go worker with one `php artisan queue:work` process (Laravel 8's own
# Illuminate\Queue\Worker, testdata/php/work.php) on the same redis-server, in one run:
#
#   throughput  N no-op jobs (App\Jobs\Noop, Laravel-identical payloads queued by the
#               producer package) drained by one PHP worker, then by the Go worker at
#               concurrency 16 and 64; jobs/s and the Go/PHP ratio (target >= 6x)
#   commands    Redis commands per job from INFO commandstats (which also counts the
#               commands the Lua scripts run), and the client's own calls per job
#               (EVAL/EVALSHA/ZREM/GET/MGET/BLPOP: round trips)
#   latency     p50/p99 from push to handler start, jobs pushed one at a time 2 ms apart
#               to a Go worker idling in BLPOP (BlockFor); target p99 < 10 ms
#   memory      peak RSS (VmHWM) of the Go worker process at concurrency 64; target < 40 MB
#
# The redis-server is started by this script on a free port and stopped at the end.
# With ROUNDS > 1 each throughput run is repeated and the best one kept, which filters out
# other load on a shared machine (the rounds alternate PHP and Go).
# Usage: scripts/bench-worker.sh [JOBS [ROUNDS]]    (default 20000 1; needs go, php, redis-server)
set -euo pipefail

cd "$(dirname "$0")/.."
jobs="${1:-20000}"
rounds="${2:-1}"
latency_jobs=2000
prefix=laravel_database_
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

go test -c -o "$work/laraq.test" .

bench_mode() { # MODE QUEUE [VAR=value...]: one TestBenchProcess run, prints its output line
    local mode=$1 queue=$2
    shift 2
    env LARAQ_BENCH_REDIS="127.0.0.1:$port" LARAQ_BENCH_PREFIX="$prefix" LARAQ_BENCH_MODE="$mode" \
        LARAQ_BENCH_QUEUE="$queue" LARAQ_BENCH_N="$jobs" "$@" \
        "$work/laraq.test" -test.run '^TestBenchProcess$' | grep -v '^PASS$' || true
}

# commandstats: "total client" call counts (client = the commands a worker sends itself).
stats() {
    redis-cli -p "$port" info commandstats | tr -d '\r' | awk -F'[:=,]' '
        /^cmdstat_/ && $1 != "cmdstat_info" && $1 != "cmdstat_config|resetstat" {
            total += $3
            if ($1 ~ /^cmdstat_(eval|evalsha|zrem|get|mget|blpop|setex|incrby|del)$/) client += $3
        }
        END { printf "%d %d\n", total, client }'
}
per_job() { awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN { printf "%.2f", (b - a) / n }'; }
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }

# --- PHP: one queue:work process ---
php_run() {
    bench_mode fill php
    local t0 c0 t1 c1 start end done
    read -r t0 c0 < <(stats)
    start=$(date +%s.%N)
    LARAQ_REDIS_PORT="$port" LARAQ_REDIS_PREFIX="$prefix" \
        php testdata/php/work.php --queue=php --stop-when-empty --sleep=0 >"$work/php.out"
    end=$(date +%s.%N)
    read -r t1 c1 < <(stats)
    done=$(grep -c 'Processed:' "$work/php.out" || true)
    [[ "$done" == "$jobs" ]] || { echo "PHP processed $done of $jobs jobs" >&2; exit 1; }
    echo "$(awk -v n="$jobs" -v a="$start" -v b="$end" 'BEGIN { printf "%.0f", n / (b - a) }') $(per_job "$t0" "$t1" "$jobs") $(per_job "$c0" "$c1" "$jobs")"
}

# --- Go: the worker at concurrency 16 and 64, each in a process of its own ---
go_run() { # CONCURRENCY
    bench_mode fill "go$1"
    local t0 c0 t1 c1 out n
    read -r t0 c0 < <(stats)
    out=$(bench_mode drain "go$1" LARAQ_BENCH_CONCURRENCY="$1")
    read -r t1 c1 < <(stats)
    n=$(echo "$out" | field jobs)
    [[ "$n" == "$jobs" ]] || { echo "Go processed $n of $jobs jobs: $out" >&2; exit 1; }
    echo "$(echo "$out" | field jobs_per_sec) $(per_job "$t0" "$t1" "$jobs") $(per_job "$c0" "$c1" "$jobs") $(echo "$out" | field vmhwm_kb)"
}

php_rate=0 go16_rate=0 go64_rate=0 go16_rss=0 go64_rss=0
for ((round = 1; round <= rounds; round++)); do
    read -r rate php_cmds php_rt < <(php_run)
    ((rate > php_rate)) && php_rate=$rate
    read -r rate go16_cmds go16_rt rss < <(go_run 16)
    ((rate > go16_rate)) && go16_rate=$rate
    ((rss > go16_rss)) && go16_rss=$rss
    read -r rate go64_cmds go64_rt rss < <(go_run 64)
    ((rate > go64_rate)) && go64_rate=$rate
    ((rss > go64_rss)) && go64_rss=$rss
done

# --- pickup latency with BlockFor ---
lat=$(bench_mode latency lat LARAQ_BENCH_N="$latency_jobs")
p50=$(echo "$lat" | field p50_ms)
p99=$(echo "$lat" | field p99_ms)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
verdict() { if awk -v x="$1" -v op="$2" -v y="$3" 'BEGIN { exit !((op == ">=") ? x >= y : x < y) }'; then echo "met"; else echo "MISSED"; fi; }

echo
echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), $(nproc) CPUs, $jobs no-op jobs per run, best of $rounds"
printf '%-34s %10s %10s %12s %12s\n' "worker" "jobs/s" "vs PHP" "cmds/job" "calls/job"
printf '%-34s %10s %10s %12s %12s\n' "PHP queue:work (1 process)" "$php_rate" "1.0x" "$php_cmds" "$php_rt"
printf '%-34s %10s %10s %12s %12s\n' "Go worker, concurrency 16" "$go16_rate" "$(ratio "$go16_rate" "$php_rate")x" "$go16_cmds" "$go16_rt"
printf '%-34s %10s %10s %12s %12s\n' "Go worker, concurrency 64" "$go64_rate" "$(ratio "$go64_rate" "$php_rate")x" "$go64_cmds" "$go64_rt"
echo "(cmds/job: INFO commandstats, script-internal commands included; calls/job: commands the worker sends)"
echo
echo "pickup latency (BlockFor, $latency_jobs jobs 2 ms apart): p50 ${p50} ms, p99 ${p99} ms"
echo "peak RSS of the Go worker: $((go16_rss / 1024)) MB at concurrency 16, $((go64_rss / 1024)) MB at concurrency 64"
echo
echo "targets: throughput >= 6x one PHP worker: $(verdict "$(ratio "$go16_rate" "$php_rate")" ">=" 6) at concurrency 16, $(verdict "$(ratio "$go64_rate" "$php_rate")" ">=" 6) at 64;" \
    "p99 pickup < 10 ms: $(verdict "$p99" "<" 10); RSS < 40 MB at concurrency 64: $(if ((go64_rss > 0)); then verdict "$((go64_rss / 1024))" "<" 40; else echo "NOT MEASURED"; fi)"
