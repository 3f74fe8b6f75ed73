#!/usr/bin/env bash
# The test suite, as CI runs it. Builds the tests once, then runs them in two processes at the same time, so that both
# cores are used:
# - one after another, the suites that must have the process to themselves: those on a manual clock (ManualClock moves
#   time when the process is quiet, so another test's work would look like theirs), the web page under a crowd
#   (LoadTests: a thousand connections would push other tests' descriptors past select()'s limit), and the binary's
#   tests of outages, rate limits, workers, batch mode, retries and hybrid, which measure the daemon's pace;
# - everything else in parallel, three tests at a time (more start browsers and daemons faster than two processors
#   serve them, and their deadlines pass); suites that share a resource are `.serialized`.
# Both outputs are kept; the run fails if either fails. At the end it prints how long each took and the ten slowest
# tests of each, so that growth is seen when it happens.
#
#   scripts/test.sh
set -uo pipefail
cd "$(dirname "$0")/.."

alone='(ShelfdTests|ShelfDaemonTests|ShelfHardcoverTests)\.([A-Za-z]*OnTheClockTests|LoadTests|OutageTests|RateLimitTests|SharedStoreTests|BatchModeTests|FailureTests|HybridTests|StoreMigrationTests)/'

building=$SECONDS
swift build --build-tests || exit 1
echo "test: the build took $((SECONDS - building)) s"
# ShelfdTests run README's release build of shelfd when it is built from the current sources: what a person installs,
# and the daemons the tests start use about two fifths of the run's processor time, most of it in code a debug build
# runs several times slower. Otherwise the debug one built here. Harness.swift refuses either if it is older than Sources.
if [ -x .build/release/shelfd ] && [ -z "$(find Sources -newer .build/release/shelfd -print -quit)" ]; then
    export SHELFD_BINARY="$PWD/.build/release/shelfd"
    echo "test: the binary under test is the release build"
else
    echo "test: the binary under test is the debug build (the release build is missing or older than Sources)"
fi
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
# The test bundle is run directly: two `swift test` processes would wait on each other's lock on .build.
bundle="$(swift build --show-bin-path)/shelfdPackageTests.xctest"
tests() { NO_COLOR=1 "$bundle" --testing-library swift-testing --verbose "$@"; }

started=$SECONDS
( tests --no-parallel --filter "$alone" > "$logs/alone.log" 2>&1
  echo $? > "$logs/alone.status"; echo $((SECONDS - started)) > "$logs/alone.seconds" ) &
tests --experimental-maximum-parallelization-width 3 --skip "$alone" 2>&1 | tee "$logs/rest.log"
rest=${PIPESTATUS[0]}
rest_seconds=$((SECONDS - started))
wait
echo "test: one after another ($alone):"
cat "$logs/alone.log"
alone_status=$(cat "$logs/alone.status" 2>/dev/null || echo 1)

echo "test: in parallel took $rest_seconds s (status $rest), one after another $(cat "$logs/alone.seconds" 2>/dev/null) s (status $alone_status)"
# A test in parallel takes longer than alone: its neighbours share the processors, and Swift Testing counts a test's
# time from before it waits for one of the three places, so a quick test queued behind slow ones shows their time too.
# Only the list of the tests one after another is each test's own time; each list is its own.
# Verbose output times each case of a parameterized test; the line of the test as a whole would count the time its
# cases waited for one another, so it is left out.
slowest() {
    sed -nE -e '/with [0-9]+ test cases|Test run with|Suite /d' \
        -e "s/^.*Test case passing (.*) to \"(.*)\" \(aka '[^']*'\) (passed|failed) after ([0-9.]+) seconds.*\$/\4 \"\2\" [\1] (\3)/p" \
        -e "s/^.*Test \"(.*)\" (\(aka '[^']*'\) )?(passed|failed) after ([0-9.]+) seconds.*\$/\4 \"\1\" (\3)/p" "$1" \
        | sort -rn | head -n 10 | awk '{ printf "  %8.1f s  ", $1; $1 = ""; sub(/^ /, ""); print }'
}
echo "test: the ten slowest one after another:"
slowest "$logs/alone.log"
echo "test: the ten slowest in parallel (with their wait for a place):"
slowest "$logs/rest.log"
# Failures last, where a log's tail shows them: each failed test and the issues it recorded, or, when the process
# ended without naming one (a crash), its last lines.
report_failures() {
    local name=$1 status=$2 log=$3
    [ "$status" -eq 0 ] && return
    echo "test: $name failed (status $status):"
    if grep -q '✘' "$log"; then
        grep '✘' "$log" | head -n 60
    else
        tail -n 40 "$log"
    fi
}
report_failures "one after another" "$alone_status" "$logs/alone.log"
report_failures "in parallel" "$rest" "$logs/rest.log"

[ "$rest" -eq 0 ] && [ "$alone_status" -eq 0 ]
