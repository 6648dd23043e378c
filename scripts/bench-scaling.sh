#!/usr/bin/env bash
# How the cost of a job grows with the work (issue 22's scaling table): each row drains
# JOBS no-op jobs with the Go worker on a fresh redis-server (or Redis Cluster) started for
# it, and measures per job the servers' CPU (INFO cpu, every node of the row, from after
# the fill to after the last worker exited), their script time (INFO commandstats EVAL +
# EVALSHA usec), the worker processes' CPU (getrusage, summed), jobs/s (all jobs over the
# span from the first worker's start to the last one's end) and the largest worker
# process' peak RSS. Every row changes one thing of the first (0.6 KB payloads, one queue,
# one worker process, concurrency 64, no migration):
#
#   payload     0.6, 8 and 64 KB (App\Jobs\Padded; the pop's cjson work grows with it);
#               the 64 KB row drains BIG_JOBS jobs
#   queues      1, 10 and 100 queues per worker, worked in priority order as queue:work
#               --queue=q1,q2,...; the jobs spread evenly, so the worker empties them in
#               turn and each pop first walks the emptied ones; and 100 with every job in
#               the last queue (each pop walks 99 empty ones)
#   processes   1, 2 and 4 worker processes on one queue of one redis-server, the same
#               jobs in all
#   concurrency 16, 64 and 256
#   migration   10% of the jobs only a migration brings back: 5% due in :delayed, 5%
#               left in :reserved with an expired reservation
#   cluster     three queues, one worker process each: on one redis-server, on a Redis
#               Cluster of one master, and of three masters with a queue on each; queues
#               named {NAME}, as Laravel ≤13.4 applications must name cluster queues
#
# Rounds run every row once, in this order, so that the machine's drifting speed falls on
# all rows alike; the table gives the median of the rounds and, for jobs/s and the CPU
# figures, their range. It is printed as Markdown, as docs/benchmarks.md shows it.
#
# Usage: scripts/bench-scaling.sh [JOBS [ROUNDS]]   (make bench-scaling; default 50000 3)
# Environment: BIG_JOBS (the 64 KB row's jobs, default JOBS/5), ROWS (a regexp of the row
# names to run: base payload-8k payload-64k queues-10 queues-100 queues-100-last procs-2
# procs-4 conc-16 conc-256 due-10 single-3q cluster-1 cluster-3).
# Needs go, redis-server and redis-cli (7.0+ for a one-master cluster's ADDSLOTSRANGE).
set -euo pipefail

cd "$(dirname "$0")/.."
jobs="${1:-${JOBS:-50000}}"
rounds="${2:-${ROUNDS:-3}}"
big_jobs="${BIG_JOBS:-$((jobs / 5))}"
rows_re="${ROWS:-.}"
prefix=laravel_database_
all_rows=(base payload-8k payload-64k queues-10 queues-100 queues-100-last procs-2 procs-4 conc-16 conc-256 due-10 single-3q cluster-1 cluster-3)

# The entry point: internal/bench's test binary, TestBenchProcess (fill and drain modes).
BENCH_PKG=./internal/bench
BENCH_TEST=TestBenchProcess

work="$(mktemp -d)"
servers=() # the pids of the current row's redis-servers
stop_servers() {
    local pid
    for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${servers[@]}"; do wait "$pid" 2>/dev/null || true; done
    servers=()
    rm -rf "$work"/node-*
}
trap 'stop_servers; rm -rf "$work"' EXIT

for tool in go redis-server redis-cli; do
    command -v "$tool" >/dev/null || { echo "$tool not found" >&2; exit 1; }
done
rows=()
for row in "${all_rows[@]}"; do
    if [[ "$row" =~ $rows_re ]]; then rows+=("$row"); fi
done
[[ ${#rows[@]} -gt 0 ]] || { echo "ROWS=$rows_re matches no row of: ${all_rows[*]}" >&2; exit 1; }

go test -c -o "$work/bench.test" "$BENCH_PKG"

# start_server [ARGS...]: a redis-server of ours on a free port (its cluster bus port, +10000,
# free too), in a directory of its own; sets started_port. A port another server already
# answers on is told apart by the process id INFO reports.
start_server() {
    local port dir pid
    for _ in $(seq 1 20); do
        port=$((20000 + RANDOM % 25000))
        dir="$work/node-$port"
        mkdir -p "$dir"
        redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" "$@" >"$dir/log" 2>&1 &
        pid=$!
        for _ in $(seq 1 50); do
            if ! kill -0 "$pid" 2>/dev/null; then break; fi
            if [[ "$(redis-cli -p "$port" info server 2>/dev/null | tr -d '\r' | sed -n 's/^process_id://p')" == "$pid" ]]; then
                servers+=("$pid")
                started_port=$port
                return 0
            fi
            sleep 0.05
        done
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    echo "could not start redis-server" >&2
    exit 1
}

# start_cluster MASTERS: a Redis Cluster of that many masters, no replicas; sets ports.
start_cluster() {
    local n=$1 p addrs=()
    ports=()
    for ((i = 0; i < n; i++)); do
        start_server --cluster-enabled yes --cluster-config-file nodes.conf --loglevel warning
        ports+=("$started_port")
        addrs+=("127.0.0.1:$started_port")
    done
    if ((n == 1)); then
        redis-cli -p "${ports[0]}" cluster addslotsrange 0 16383 >/dev/null
    else
        redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes >"$work/cluster-create.log" 2>&1 ||
            { cat "$work/cluster-create.log" >&2; exit 1; }
    fi
    for p in "${ports[@]}"; do
        for _ in $(seq 1 200); do
            if redis-cli -p "$p" cluster info | grep -q 'cluster_state:ok'; then continue 2; fi
            sleep 0.1
        done
        echo "the cluster did not come up on port $p" >&2
        exit 1
    done
}

# cluster_queues N PORT: N queue names {qK}, each on a different master of the cluster
# PORT belongs to (the first names that hash there, by CLUSTER KEYSLOT and the masters'
# slot ranges in CLUSTER NODES).
cluster_queues() {
    local want=$1 port=$2 k slot owner names=() taken=" "
    redis-cli -p "$port" cluster nodes | awk '/master/ { for (i = 9; i <= NF; i++) { split($i, r, "-"); if (r[2] == "") r[2] = r[1]; print $2, r[1], r[2] } }' >"$work/slots"
    for ((k = 0; ${#names[@]} < want && k < 10000; k++)); do
        slot=$(redis-cli -p "$port" cluster keyslot "q$k")
        owner=$(awk -v s="$slot" '$2 <= s && s <= $3 { print $1 }' "$work/slots")
        if [[ "$taken" != *" $owner "* ]]; then
            taken+="$owner "
            names+=("{q$k}")
        fi
    done
    [[ ${#names[@]} -eq $want ]] || { echo "no queue name for each of $want masters" >&2; exit 1; }
    (IFS=,; echo "${names[*]}")
}

# usage PORT...: "cpu_seconds script_usec" of each server, one line each.
usage() {
    local p
    for p in "$@"; do
        redis-cli -p "$p" info all | tr -d '\r' | awk -F'[:=,]' '
            /^used_cpu_(user|sys):/ { cpu += $2 }
            /^cmdstat_(eval|evalsha):/ { for (i = 2; i < NF; i++) if ($i == "usec") us += $(i + 1) }
            END { printf "%.6f %d\n", cpu, us }'
    done
}

field() { sed -n "s/.*\<$1=\([-0-9.]*\).*/\1/p"; } # KEY, reading a name=value line

bench() { # MODE [VAR=value...]: one TestBenchProcess run on the row's servers
    local mode=$1
    shift
    env "${connect[@]}" LARAQ_BENCH_PREFIX="$prefix" LARAQ_BENCH_MODE="$mode" "$@" \
        "$work/bench.test" -test.run "^$BENCH_TEST\$"
}

# run_row NAME ROUND: one row on fresh servers; writes its figures to $work/NAME.ROUND.
run_row() {
    local name=$1 r=$2
    local n=$jobs payload=0 conc=64 procs=1 queues=bench due=0 last=0 topo=single split=0
    case $name in
    base) ;;
    payload-8k) payload=8192 ;;
    payload-64k) payload=65536 n=$big_jobs ;;
    queues-10) queues=$(seq -s, -f 'q%g' 1 10) ;;
    queues-100) queues=$(seq -s, -f 'q%g' 1 100) ;;
    queues-100-last) queues=$(seq -s, -f 'q%g' 1 100) last=1 ;;
    procs-2) procs=2 ;;
    procs-4) procs=4 ;;
    conc-16) conc=16 ;;
    conc-256) conc=256 ;;
    due-10) due=0.1 ;;
    single-3q) procs=3 split=1 ;;
    cluster-1) procs=3 split=1 topo=cluster1 ;;
    cluster-3) procs=3 split=1 topo=cluster3 ;;
    *) echo "unknown row $name" >&2; exit 1 ;;
    esac

    case $topo in
    single)
        start_server
        ports=("$started_port")
        connect=(LARAQ_BENCH_REDIS="127.0.0.1:$started_port")
        ;;
    cluster1 | cluster3)
        start_cluster "${topo#cluster}"
        local nodes=()
        for p in "${ports[@]}"; do nodes+=("127.0.0.1:$p"); done
        connect=(LARAQ_BENCH_CLUSTER="$(IFS=,; echo "${nodes[*]}")")
        ;;
    esac
    if ((split)); then queues=$split_queues; fi

    local fill
    fill=$(bench fill LARAQ_BENCH_QUEUE="$queues" LARAQ_BENCH_N="$n" LARAQ_BENCH_PAYLOAD_BYTES="$payload" \
        LARAQ_BENCH_DUE="$due" LARAQ_BENCH_LAST="$last" | grep '=') || { echo "$name: fill failed" >&2; exit 1; }
    usage "${ports[@]}" >"$work/before"

    local at pids=() p q
    at=$(($(date +%s%N) + 200000000)) # every worker starts 0.2 s from now
    IFS=, read -r -a qs <<<"$queues"
    for ((p = 0; p < procs; p++)); do
        q=$queues
        if ((split)); then q=${qs[p]}; fi
        bench drain LARAQ_BENCH_QUEUE="$q" LARAQ_BENCH_CONCURRENCY="$conc" LARAQ_BENCH_START_AT="$at" >"$work/out.$p" 2>&1 &
        pids+=($!)
    done
    for p in "${!pids[@]}"; do
        wait "${pids[p]}" || { echo "$name: worker process $p failed:" >&2; cat "$work/out.$p" >&2; exit 1; }
    done
    usage "${ports[@]}" >"$work/after"
    stop_servers

    # Every worker's line: jobs, go_cpu_s, vmhwm_kb, start_ns, end_ns.
    for ((p = 0; p < procs; p++)); do grep '^jobs=' "$work/out.$p"; done >"$work/lines"
    awk -v want="$n" -v name="$name" -v bytes="$(echo "$fill" | field payload_bytes)" '
        function f(k,   i, kv) { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) return kv[2] } }
        FILENAME ~ /before$/ { cpu0[FNR] = $1; us0[FNR] = $2; next }
        FILENAME ~ /after$/ { d = $1 - cpu0[FNR]; cpu += d; if (d > busiest) busiest = d; us += $2 - us0[FNR]; next }
        { jobs += f("jobs"); gocpu += f("go_cpu_s"); if (f("vmhwm_kb") > rss) rss = f("vmhwm_kb")
          if (first == "" || f("start_ns") < first) first = f("start_ns"); if (f("end_ns") > last) last = f("end_ns") }
        END {
            if (jobs != want) { printf "%s: the workers ran %d of %d jobs\n", name, jobs, want > "/dev/stderr"; exit 1 }
            printf "jobs=%d payload_bytes=%d jobs_per_sec=%.0f redis_cpu_us=%.2f busiest_cpu_us=%.2f script_us=%.2f go_cpu_us=%.2f rss_mb=%.1f\n",
                jobs, bytes, jobs / ((last - first) / 1e9), cpu * 1e6 / jobs, busiest * 1e6 / jobs, us / jobs, gocpu * 1e6 / jobs, rss / 1024
        }' "$work/before" "$work/after" "$work/lines" >"$work/$name.$r"
}

# The three queues of the split rows: one on each master of a three-master cluster
# (cluster_queues), and the same names in every split row.
split_queues=""
if [[ " ${rows[*]} " =~ \ (single-3q|cluster-1|cluster-3)\  ]]; then
    start_cluster 3
    split_queues=$(cluster_queues 3 "${ports[0]}")
    stop_servers
fi

for ((r = 1; r <= rounds; r++)); do
    for row in "${rows[@]}"; do
        echo "round $r of $rounds: $row ..." >&2
        run_row "$row" "$r"
    done
done

# stat ROW KEY: "median min max" over the rounds.
stat() {
    for ((r = 1; r <= rounds; r++)); do field "$2" <"$work/$1.$r"; done | sort -g |
        awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; print m, a[1], a[NR] }'
}
# cell ROW KEY FORMAT: the median, and the range when there are several rounds.
cell() {
    local m lo hi
    read -r m lo hi < <(stat "$1" "$2")
    if ((rounds > 1)); then
        awk -v m="$m" -v lo="$lo" -v hi="$hi" -v f="$3" 'BEGIN { printf f " (" f "–" f ")", m, lo, hi }'
    else
        awk -v m="$m" -v f="$3" 'BEGIN { printf f, m }'
    fi
}
label() {
    case $1 in
    base) echo "0.6 KB, 1 queue, 1 process, c=64" ;;
    payload-8k) echo "payload 8 KB" ;;
    payload-64k) echo "payload 64 KB" ;;
    queues-10) echo "10 queues, jobs spread evenly" ;;
    queues-100) echo "100 queues, jobs spread evenly" ;;
    queues-100-last) echo "100 queues, every job in the last" ;;
    procs-2) echo "2 worker processes, c=64 each" ;;
    procs-4) echo "4 worker processes, c=64 each" ;;
    conc-16) echo "concurrency 16" ;;
    conc-256) echo "concurrency 256" ;;
    due-10) echo "10% brought back by migration" ;;
    single-3q) echo "3 queues, 1 process each, one redis-server" ;;
    cluster-1) echo "the same on a Cluster of 1 master" ;;
    cluster-3) echo "the same on a Cluster of 3 masters" ;;
    esac
}

echo
echo "redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/'), $(nproc) CPUs, $(date -u +%Y-%m-%d), median of $rounds rounds (range)"
echo
echo "| row | jobs | payload bytes | jobs/s | Redis CPU µs/job | busiest server µs/job | script µs/job | worker CPU µs/job | peak RSS MB |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for row in "${rows[@]}"; do
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$(label "$row")" \
        "$(field jobs <"$work/$row.1")" "$(field payload_bytes <"$work/$row.1")" \
        "$(cell "$row" jobs_per_sec '%.0f')" "$(cell "$row" redis_cpu_us '%.1f')" "$(cell "$row" busiest_cpu_us '%.1f')" \
        "$(cell "$row" script_us '%.1f')" "$(cell "$row" go_cpu_us '%.1f')" "$(cell "$row" rss_mb '%.1f')"
done
