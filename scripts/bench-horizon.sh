#!/usr/bin/env bash
# The cost of Horizon's records, in one run on one redis-server (the root package's
# TestHorizonBenchProcess, which starts it): N Step jobs dispatched through Horizon's
# queue, drained by
#
#   - Horizon's PHP worker path: Laravel 11's Worker on Horizon's RedisQueue with its
#     listeners, one process (testdata/php/horizon/op.php work, the Laravel 11 peer), once;
#   - the Go worker at concurrency 16 with Horizon's records off and on, back to back in
#     alternating order, ROUNDS times (the same jobs, pushed through Horizon's queue each
#     time: only the worker's bookkeeping differs).
#
# Prints the best jobs/s of each, the ratios to PHP, each side's Redis CPU, worker CPU and
# script time per job (medians of the rounds), and the median of the rounds' on/off ratios
# (target >= 0.8): each pairs two runs a second apart, which a shared machine's drifting
# speed moves alike. With BENCH_TARGETS=FILE the target is also appended to FILE
# as a "name|value|limit|verdict" line (scripts/bench.sh).
# Usage: scripts/bench-horizon.sh [JOBS [ROUNDS]]   (default 5000 5; needs go, php, redis-server,
# and the Laravel peers: scripts/install-peers.sh)
set -euo pipefail

cd "$(dirname "$0")/.."
jobs="${1:-${HORIZON_JOBS:-5000}}"
rounds="${2:-${ROUNDS:-5}}"

# The entry point, one variable each.
HORIZON_BENCH_PKG=.
HORIZON_BENCH_TEST=TestHorizonBenchProcess

out="$(mktemp)"
trap 'rm -f "$out"' EXIT
LARAQ_HORIZON_BENCH_N="$jobs" LARAQ_HORIZON_BENCH_ROUNDS="$rounds" \
    go test -count=1 -run "^$HORIZON_BENCH_TEST\$" -timeout 30m -v "$HORIZON_BENCH_PKG" | grep -v -E '^(=== RUN|--- PASS|PASS|ok )' | tee "$out"
# "Horizon records on/off: 0.83, the median of 5 rounds (... ) (target >= 0.8: met)"
line=$(grep '^Horizon records on/off: ' "$out") || { echo "no on/off ratio in the output" >&2; exit 1; }
value=$(echo "$line" | sed 's/^Horizon records on\/off: \([0-9.]*\).*/\1/')
verdict=$(echo "$line" | sed 's/.*: \([a-zA-Z]*\))$/\1/')
if [[ -n "${BENCH_TARGETS:-}" ]]; then echo "Horizon records on / off (c=16)|$value|>= 0.8|$verdict" >>"$BENCH_TARGETS"; fi
