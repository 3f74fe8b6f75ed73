#!/usr/bin/env bash
# Shelves benchmark: a round closed on a shelf of 60 books, the shelf read, "where is my book" and the background
# push's look at what the round changed for Hardcover, at 1,000 and 30,000 works, on SQLite and on a PostgreSQL
# server of its own; each with its ratio to the first size. See
# Benchmarks/ShelvesBenchmark/main.swift. PostgreSQL comes from scripts/install-deps.sh.
#
#   scripts/bench-shelves.sh [--sizes 1000x2,30000x2] [--engines sqlite,postgres]
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product shelfd-bench-shelves
exec "$(swift build -c release --show-bin-path)/shelfd-bench-shelves" "$@"
