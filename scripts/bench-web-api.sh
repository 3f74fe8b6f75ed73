#!/usr/bin/env bash
# The API under load: `shelfd watch` on a temporary root (offline provider, no photos), its RSS idle, then
# wrk (Debian's) against /api/v1/status with 50 connections on loopback, then its RSS again.
#
#   scripts/bench-web-api.sh [--duration 10s] [--connections 50] [--threads 2]
# SHELFD=path picks the binary (default: .build/release/shelfd, built if missing).
set -euo pipefail

duration=10s connections=50 threads=2
while [ $# -gt 0 ]; do
    case "$1" in
        --duration) duration=$2; shift 2 ;;
        --connections) connections=$2; shift 2 ;;
        --threads) threads=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
command -v wrk >/dev/null || { echo "wrk is missing: scripts/install-deps.sh installs it (apt-get install wrk)" >&2; exit 1; }
cd "$(dirname "$0")/.."
if [ -z "${SHELFD:-}" ]; then
    [ -x .build/release/shelfd ] || swift build -c release --static-swift-stdlib --product shelfd
    SHELFD=.build/release/shelfd
fi

base=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$base"' EXIT
mkdir -p "$base/Shelves/incoming"
cat > "$base/shelfd.toml" <<EOF
[paths]
root = "$base/Shelves"
state = "$base/state"
[pipeline]
provider = "ocr"
[enrich]
sources = ["catalogue"]
[web]
listen = "127.0.0.1:0"
EOF
HOME=$base "$SHELFD" watch --config "$base/shelfd.toml" --log-level warning 2>"$base/daemon.log" &
pid=$!
url=""
for _ in $(seq 1 200); do
    url=$(sqlite3 "$base/state/shelfd.db" "SELECT value FROM setting WHERE key = 'web.url'" 2>/dev/null || true)
    [ -n "$url" ] && break
    sleep 0.1
done
[ -n "$url" ] || { echo "the daemon did not start its web server:" >&2; cat "$base/daemon.log" >&2; exit 1; }
rss() { awk '/^VmRSS/ { print $2 / 1024 " MiB" }' "/proc/$pid/status"; }
sleep 2
echo "binary:        $SHELFD"
echo "daemon idle:   RSS $(rss)"
curl -sf "${url}api/v1/status" >/dev/null
echo "after 1 call:  RSS $(rss)"
wrk -t"$threads" -c"$connections" -d"$duration" --latency "${url}api/v1/status"
echo "after wrk:     RSS $(rss)"
sleep 5
echo "5 s later:     RSS $(rss)"
