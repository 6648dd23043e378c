# laraq's tasks. `make help` lists them.
#
# The tests run against real peers (redis-server, PHP with Laravel 8's components,
# MariaDB, PostgreSQL; scripts/install-peers.sh installs them). `make test` sets CI=true
# unless CI is already set, so a missing peer fails its tests instead of skipping them;
# `make test-short` (or CI=false) skips them.

GO          ?= go
# 10 s per target keeps `make test` (go test ./..., then 46 targets) near 13 minutes on
# 2 cores from a cold build cache, compiling included; `make fuzz-long` fuzzes for longer.
FUZZTIME    ?= 10s
LONGFUZZ    ?= 5m
# Minimizing each new interesting input may take 60 s by default, which would eat a short
# run's whole budget; a crasher is still minimized, within this bound.
FUZZMINIMIZE ?= 3s
TESTFLAGS   ?= -count=1 -timeout=15m
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Packages the ./... pattern leaves out (directories named testdata).
EXTRA_PKGS  := ./testdata/laravel-payloads

.DEFAULT_GOAL := help
# The long chaos suite: CHAOS_RUN is a regexp of scenario names (internal/chaos/README.md).
CHAOS_RUN     ?= .
CHAOS_TIMEOUT ?= 3h

.PHONY: help test test-short test-go fuzz fuzz-list fuzz-long bench bench-scaling bench-go chaos chaos-short lint fmt demo

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z][a-z-]*:.*## / {printf "  make %-13s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

test: test-go fuzz ## the full suite: go test ./... with every peer, then each fuzz target for FUZZTIME (10s)

test-go: ## go test ./... (CI=true unless set: a missing peer fails; no cache, timeout)
	CI=$${CI:-true} $(GO) test $(TESTFLAGS) ./... $(EXTRA_PKGS)

test-short: ## go test -short ./... without fuzzing; tests whose peer is missing are skipped (CI unset)
	env -u CI $(GO) test -short $(TESTFLAGS) ./... $(EXTRA_PKGS)

# Every `func FuzzX` of a _test.go file, as "DIR NAME" lines.
LIST_FUZZ = grep -rl --include='*_test.go' '^func Fuzz' . | sort | while read -r f; do \
		for n in $$(grep -o '^func Fuzz[A-Za-z0-9_]*' "$$f" | cut -c6-); do echo "$$(dirname "$$f") $$n"; done; \
	done

fuzz-list: ## list the fuzz targets
	@$(LIST_FUZZ)

# A target fails when `go test -fuzz` fails, except for Go 1.26's own race at the end of a
# -fuzztime run (golang/go#75804, fixed in Go 1.27): "context deadline exceeded" with no
# failing input written is reported as such and not counted.
fuzz: ## run each fuzz target for FUZZTIME, seeded with the golden data (e.g. make fuzz FUZZTIME=1m)
	@out=$$(mktemp); trap 'rm -f "$$out"' EXIT; failed=""; \
	for t in $$($(LIST_FUZZ) | tr ' ' ':'); do \
		dir=$${t%%:*}; name=$${t##*:}; corpus="$$dir/testdata/fuzz/$$name"; \
		before=$$(ls "$$corpus" 2>/dev/null | wc -l); \
		printf 'fuzz %-16s %-24s ' "$$dir" "$$name"; \
		if $(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) "$$dir" >"$$out" 2>&1; then \
			echo "ok $$(grep -o 'execs: [0-9]*' "$$out" | tail -n 1)"; \
		elif [ "$$(ls "$$corpus" 2>/dev/null | wc -l)" -eq "$$before" ] && grep -q 'context deadline exceeded' "$$out"; then \
			echo "ok (Go's fuzz coordinator reported its own deadline, golang/go#75804; no failing input)"; \
		else \
			echo FAIL; cat "$$out"; failed="$$failed $$dir:$$name"; \
		fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz targets that failed (their inputs are in testdata/fuzz):$$failed"; exit 1; fi

fuzz-long: ## run each fuzz target for LONGFUZZ (5m)
	@$(MAKE) --no-print-directory fuzz FUZZTIME=$(LONGFUZZ)

# The speed targets as ratios measured in one run (scripts/bench.sh): ROUNDS=1 for a quick
# look, JOBS for the drains' size.
ROUNDS ?= 5
JOBS   ?= 50000

bench: ## the speed targets: codec, worker, asynq, PHP, Horizon; medians of ROUNDS (5) runs, met/MISSED
	ROUNDS=$(ROUNDS) JOBS=$(JOBS) ./scripts/bench.sh

# The scaling table (scripts/bench-scaling.sh, docs/benchmarks.md): not part of `make bench`.
SCALING_JOBS   ?= 50000
SCALING_ROUNDS ?= 3

bench-scaling: ## how a job's cost grows: payload, queues, processes, concurrency, migration, Cluster shards
	./scripts/bench-scaling.sh $(SCALING_JOBS) $(SCALING_ROUNDS)

bench-go: ## every Go benchmark (go test -bench), with allocations
	$(GO) test -run='^$$' -bench=. -benchmem ./...

chaos: ## the long chaos suite: kills, outages, stalls on real workers; prints a table (CHAOS_RUN=regexp)
	CI=$${CI:-true} $(GO) test -count=1 -timeout=$(CHAOS_TIMEOUT) -v -run '^TestChaosLong$$/($(CHAOS_RUN))' ./internal/chaos -chaos.long

chaos-short: ## the short chaos suite alone (it also runs in make test), verbose (CHAOS_RUN=regexp)
	CI=$${CI:-true} $(GO) test -count=1 -timeout=10m -v -run '^TestChaos$$/($(CHAOS_RUN))' ./internal/chaos

lint: ## go vet, gofmt check, and staticcheck (pinned; skipped when the module proxy cannot fetch it)
	$(GO) vet ./... $(EXTRA_PKGS)
	@out="$$(gofmt -l . )"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@if $(GO) run $(STATICCHECK) -version >/dev/null 2>&1; then \
		echo "staticcheck ./..."; $(GO) run $(STATICCHECK) ./... $(EXTRA_PKGS); \
	else echo "staticcheck: $(STATICCHECK) not available from the module proxy; skipped"; fi

fmt: ## gofmt -w every Go file
	gofmt -w .

demo: ## run `laraq demo`: Laravel jobs through Go handlers on an in-memory Redis
	$(GO) run ./cmd/laraq demo
