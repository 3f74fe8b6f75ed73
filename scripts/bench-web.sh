#!/usr/bin/env bash
# Web benchmark: at 1,000 and 30,000 works (two sightings each) and 10,000 works × 40 sightings, in one run:
# a review decision, a photo of 40 spines cleared as its review page clears it, a batch commit per photo, how
# soon library.json follows, the library page, wrk against /api/v1/status beside /healthz and the daemon's RSS;
# each figure with its ratio to the first size. See
# Benchmarks/WebBenchmark/main.swift. Needs wrk (scripts/install-deps.sh installs it).
#
#   scripts/bench-web.sh [--sizes 1000x2,30000x2,10000x40]
set -euo pipefail
cd "$(dirname "$0")/.."
# The same build the README installs: a static Swift runtime, so the figures are those of a deployed daemon.
swift build -c release --static-swift-stdlib --product shelfd
swift build -c release --static-swift-stdlib --product shelfd-bench-web
exec "$(swift build -c release --static-swift-stdlib --show-bin-path)/shelfd-bench-web" "$@"
