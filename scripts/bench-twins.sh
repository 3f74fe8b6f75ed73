#!/usr/bin/env bash
# Twins benchmark: the six sample shelves read twice through the Gemini emulator, the second day with every third
# book read by its title alone; the works, twins and sightings the library as the first source leaves, with the
# second day's photos on the same shelves and in other folders. See Benchmarks/TwinsBenchmark/main.swift.
#
#   scripts/bench-twins.sh
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --product shelfd
swift build -c release --static-swift-stdlib --product shelfd-bench-twins
exec "$(swift build -c release --static-swift-stdlib --show-bin-path)/shelfd-bench-twins" --samples samples "$@"
