#!/usr/bin/env bash
# Web benchmark: the library page at 10,000 works (server time and size), a review decision's round trip, and
# wrk against /api/v1/status (requests/s, p99, the daemon's RSS before and after). See
# Benchmarks/WebBenchmark/main.swift. Needs wrk (scripts/install-deps.sh installs it).
#
#   scripts/bench-web.sh [--works N] [--photos N]
set -euo pipefail
cd "$(dirname "$0")/.."
# The same build the README installs: a static Swift runtime, so the figures are those of a deployed daemon.
swift build -c release --static-swift-stdlib --product shelfd
swift build -c release --static-swift-stdlib --product shelfd-bench-web
exec "$(swift build -c release --static-swift-stdlib --show-bin-path)/shelfd-bench-web" "$@"
