#!/usr/bin/env bash
# Workers benchmark: 1, 2 and 4 release `shelfd watch` workers sharing one PostgreSQL server the benchmark starts
# (Debian's postgresql package, as the tests use; SHELFD_PG_BIN names another), against the Gemini emulator at a
# fixed latency L with concurrency C in each worker. Prints photos/s beside the ideal workers × C ÷ L and beside one
# worker on SQLite in the same run, and per photo, on each engine, the statements (round trips), transactions (and of
# them the write transactions) and claims the database saw, with the claims' mean time, read from each worker's
# /metrics. The last line is the same as JSON.
#
#   scripts/bench-workers.sh [--photos N] [--latency-ms L] [--concurrency C] [--batch-size B] [--workers 1,2,4] [--keep]
set -euo pipefail

cd "$(dirname "$0")/.."
# The same build the README installs: a static Swift runtime, so the figures are those of a deployed daemon.
swift build -c release --static-swift-stdlib --product shelfd
swift build -c release --static-swift-stdlib --product shelfd-bench-workers
exec "$(swift build -c release --static-swift-stdlib --show-bin-path)/shelfd-bench-workers" "$@"
