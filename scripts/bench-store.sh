#!/usr/bin/env bash
# Database size benchmark: a year of photos (10,000 by default) through the Store API, then the prune
# `[pipeline] keep_days` makes; prints the database's bytes before and after, per photo, and after VACUUM,
# and the saved answers in responses/.
#
#   scripts/bench-store.sh [--photos N] [--books-per-photo N] [--keep-days N] [--days N]
set -euo pipefail

cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --product shelfd-bench-store
exec "$(swift build -c release --static-swift-stdlib --show-bin-path)/shelfd-bench-store" "$@"
