#!/usr/bin/env bash
# The test suite, as CI runs it. Builds the tests once, then runs them in two lanes at the same time, each lane one
# test after another: the suites that mostly wait on the clock (a two-minute outage, requests "in any 60 s", workers
# sharing one PostgreSQL queue at a rate limit, the Batch API's polls, retries' backoff) in one, everything else in the
# other, so that their waiting overlaps the other lane's work instead of adding to it. Both lanes' output is kept; the
# run fails if either fails. At the end it prints how long each lane took and the ten slowest tests, so that growth is
# seen when it happens.
#
#   scripts/test.sh
set -uo pipefail
cd "$(dirname "$0")/.."

waiting='ShelfdTests\.(OutageTests|RateLimitTests|SharedStoreTests|BatchModeTests|FailureTests|HybridTests|StoreMigrationTests)/'

swift build --build-tests || exit 1
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# The test bundle is run directly: two `swift test` processes would wait on each other's lock on .build.
bundle="$(swift build --show-bin-path)/shelfdPackageTests.xctest"
tests() { NO_COLOR=1 "$bundle" --testing-library swift-testing --no-parallel "$@"; }

started=$SECONDS
( tests --filter "$waiting" > "$logs/waiting.log" 2>&1
  echo $? > "$logs/waiting.status"; echo $((SECONDS - started)) > "$logs/waiting.seconds" ) &
tests --skip "$waiting" 2>&1 | tee "$logs/rest.log"
rest=${PIPESTATUS[0]}
rest_seconds=$((SECONDS - started))
wait
echo "test: the waiting lane ($waiting):"
cat "$logs/waiting.log"
waited=$(cat "$logs/waiting.status" 2>/dev/null || echo 1)

echo "test: the other lane took $rest_seconds s (status $rest), the waiting lane $(cat "$logs/waiting.seconds" 2>/dev/null) s (status $waited)"
echo "test: the ten slowest tests:"
cat "$logs/rest.log" "$logs/waiting.log" \
    | sed -nE 's/^.*Test (.*) (passed|failed) after ([0-9.]+) seconds.*$/\3 \1 (\2)/p' \
    | grep -v '^[0-9.]* run with ' | sort -rn | head -n 10 \
    | awk '{ printf "  %8.1f s  ", $1; $1 = ""; sub(/^ /, ""); print }'

[ "$rest" -eq 0 ] && [ "$waited" -eq 0 ]
