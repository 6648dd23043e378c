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
# Prints the best jobs/s of each, the ratios to PHP, and the median of the rounds' on/off
# ratios (target >= 0.7): each pairs two runs a second apart, which a shared machine's
# drifting speed moves alike.
# Usage: scripts/bench-horizon.sh [JOBS [ROUNDS]]   (default 5000 5; needs go, php, redis-server,
# and the Laravel peers: scripts/install-peers.sh)
set -euo pipefail

cd "$(dirname "$0")/.."
jobs="${1:-5000}"
rounds="${2:-5}"
LARAQ_HORIZON_BENCH_N="$jobs" LARAQ_HORIZON_BENCH_ROUNDS="$rounds" \
    go test -count=1 -run '^TestHorizonBenchProcess$' -timeout 30m -v . | grep -v -E '^(=== RUN|--- PASS|PASS|ok )'
