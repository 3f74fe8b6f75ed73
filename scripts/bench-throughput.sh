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
#
# With --kills D1,D2,… it measures what crashes cost instead: photos wait in incoming/, `shelfd watch` is killed with
# SIGKILL D1, D2, … seconds after each start and started again, then runs until every photo is done; it prints the
# requests each photo cost (a photo is asked again only when a kill cut its request off: at most 2), photos lost, and
# the library's works and sightings per work (nothing counted twice). --baseline BINARY measures another build the
# same way in the same run. The case of issue "a crash costs one request":
#   scripts/bench-throughput.sh --kills 1.2,2.6,1.7,2.9 --photos 10 --latency-ms 1500 [--baseline OLD/shelfd]
set -euo pipefail

cd "$(dirname "$0")/.."
# The same build the README installs: a static Swift runtime, so the figures are those of a deployed daemon.
swift build -c release --static-swift-stdlib --product shelfd
swift build -c release --static-swift-stdlib --product shelfd-bench
exec "$(swift build -c release --static-swift-stdlib --show-bin-path)/shelfd-bench" "$@"
