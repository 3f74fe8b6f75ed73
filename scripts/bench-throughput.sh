#!/usr/bin/env bash
# Throughput benchmark: runs the release `shelfd` against the in-process Gemini emulator with a fixed
# provider latency L and concurrency C, and prints photos/s beside the ideal C/L (also net of start-up,
# and against C over the measured provider round trip), CPU per photo and peak RSS for `shelfd run` and
# `shelfd watch`, then the idle daemon's CPU, wake-ups and RSS, and its exit status on SIGTERM; and first, a new daemon
# with the offline default and nothing queued, its RSS 25 s after start.
# The last line is the same report as JSON.
#
#   scripts/bench-throughput.sh [--photos N] [--latency-ms L] [--concurrency C] [--batch-size B] [--idle-s S] [--keep]
#                               [--requests-per-minute R]
#
# With --requests-per-minute R the limit is the bottleneck: it reports photos per minute ÷ R (1.0 when every
# interval the limit allows is used), the most requests in any 60 s (never above R) and the longest gap, for
# `run`, `watch`, and `run` started beside a running `watch` (both take from the one limit). For example
#   scripts/bench-throughput.sh --photos 30 --requests-per-minute 20 --latency-ms 200
set -euo pipefail

cd "$(dirname "$0")/.."
# The same build the README installs: a static Swift runtime, so the figures are those of a deployed daemon.
swift build -c release --static-swift-stdlib --product shelfd
swift build -c release --static-swift-stdlib --product shelfd-bench
exec "$(swift build -c release --static-swift-stdlib --show-bin-path)/shelfd-bench" "$@"
