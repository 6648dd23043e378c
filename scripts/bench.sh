#!/usr/bin/env bash
# Every speed target of issue 22, measured in one run: scripts/bench-phpser.sh (the codec
# against PHP's unserialize/serialize), scripts/bench-worker.sh (the worker against
# Laravel's own pop effect, asynq and one PHP worker, on one redis-server) and
# scripts/bench-horizon.sh (Horizon's records on and off), each from the median of ROUNDS
# rounds, then one table of the targets: value, limit, met/MISSED.
#
# Usage: scripts/bench.sh   (make bench)
# Environment: ROUNDS (default 5; ROUNDS=1 for a quick look), JOBS (default 50000, the
# worker's drains), PHP_JOBS, LATENCY_JOBS (see bench-worker.sh), HORIZON_JOBS (default 5000).
# Needs go, php with the Laravel peers (scripts/install-peers.sh), redis-server, redis-cli.
set -euo pipefail

cd "$(dirname "$0")/.."
export ROUNDS="${ROUNDS:-5}"
targets="$(mktemp)"
trap 'rm -f "$targets"' EXIT
export BENCH_TARGETS="$targets"

echo "== phpser against PHP (scripts/bench-phpser.sh)"
./scripts/bench-phpser.sh
echo
echo "== the worker against its yardsticks (scripts/bench-worker.sh)"
./scripts/bench-worker.sh "${JOBS:-50000}"
echo
echo "== Horizon's records (scripts/bench-horizon.sh)"
./scripts/bench-horizon.sh "${HORIZON_JOBS:-5000}"

echo
echo "== targets (issue 22), each from the median of $ROUNDS rounds"
printf '%-56s %12s %12s  %s\n' "target" "value" "limit" ""
while IFS='|' read -r name value limit verdict; do
    printf '%-56s %12s %12s  %s\n' "$name" "$value" "$limit" "$verdict"
done <"$targets"
met=$(grep -c '|met$' "$targets" || true)
echo "$met of $(wc -l <"$targets" | tr -d ' ') targets met"
