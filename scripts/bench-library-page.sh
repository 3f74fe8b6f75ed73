#!/usr/bin/env bash
# Library page benchmark: a library of 10,000 works (by default; 2 sightings each over 4,000 photos), served
# by `shelfd web`; prints the server time (curl's time to first byte, best of 5) and the size of the library
# page (first page, a later page, each sort, a search, an ISBN) and of one work's page.
#
#   scripts/bench-library-page.sh [--works N]        SHELFD=path/to/shelfd to use a built binary
set -euo pipefail

works=10000
while [ $# -gt 0 ]; do
    case "$1" in
        --works) works="$2"; shift 2 ;;
        *) echo "usage: $0 [--works N]" >&2; exit 2 ;;
    esac
done

cd "$(dirname "$0")/.."
if [ -z "${SHELFD:-}" ]; then
    swift build -c release --static-swift-stdlib --product shelfd
    SHELFD="$(swift build -c release --static-swift-stdlib --show-bin-path)/shelfd"
fi
base="$(mktemp -d)"
web=""
trap '[ -n "$web" ] && kill "$web" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$base"' EXIT
port=$((20000 + RANDOM % 20000))
cat > "$base/shelfd.toml" <<TOML
[paths]
root = "$base/Shelves"
state = "$base/state"

[web]
listen = "127.0.0.1:$port"
TOML
export SHELFD_CONFIG="$base/shelfd.toml"
"$SHELFD" status > /dev/null 2>&1 || true                  # creates the folders
mkdir -p "$base/state"
"$SHELFD" web --log-level error & web=$!                    # creates the database with its schema
until curl -sf "http://127.0.0.1:$port/healthz" > /dev/null; do sleep 0.2; done
kill "$web"; wait "$web" 2>/dev/null || true; web=""

photos=$((works * 2 / 5))
sqlite3 "$base/state/shelfd.db" <<SQL
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $photos)
INSERT INTO photo (sha256, size, relative_path, first_seen)
SELECT printf('%064x', i), 3000000, printf('shelf%02d/IMG_%05d.jpg', i % 40, i), 1700000000 + i FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $works)
INSERT INTO book (id, work_key, title, author, confidence, status, source, first_seen, updated_at)
SELECT i, printf('title:book %05d|writer%d', i, i % 997), printf('Book %05d', i), printf('Writer %d', i % 997), 0.9,
       CASE WHEN i % 10 = 0 THEN 'needs_review' ELSE 'verified' END, 'gemini', 1700000000 + i, 1700000000 + i FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $works), s(k) AS (VALUES (0), (1))
INSERT INTO book_sighting (book_id, sha256, box, confidence, shelf, seen_at, status, title, author, title_key, isbn13, decided)
SELECT i, printf('%064x', (i * 2 + k) % $photos + 1), NULL, 0.9, printf('shelf%02d', ((i * 2 + k) % $photos + 1) % 40),
       1700000000 + i + k, 'verified', printf('Book %05d', i), printf('Writer %d', i % 997),
       printf('title:book %05d|writer%d', i, i % 997), CASE WHEN i % 3 = 0 THEN printf('978%010d', i) END, 0
FROM n, s;
COMMIT;
SQL
"$SHELFD" web --log-level error & web=$!
until curl -sf "http://127.0.0.1:$port/healthz" > /dev/null; do sleep 0.2; done

measure() {
    local best="" size=""
    for _ in 1 2 3 4 5; do
        read -r t s < <(curl -s -o /dev/null -w '%{time_starttransfer} %{size_download}\n' "http://127.0.0.1:$port$1")
        size="$s"
        if [ -z "$best" ] || awk "BEGIN { exit !($t < $best) }"; then best="$t"; fi
    done
    printf '%-44s %8.1f ms %9d bytes\n' "$1" "$(awk "BEGIN { print $best * 1000 }")" "$size"
}
echo "$base" >&2; echo "shelfd library page, $works works, $photos photos ($("$SHELFD" --version 2>/dev/null || echo shelfd))"
measure "/library"
measure "/library?page=50"
measure "/library?sort=title&page=100"
measure "/library?sort=author"
measure "/library?sort=shelf&page=30"
measure "/library?q=book+0999"
measure "/library?q=Writer+5"
measure "/library?q=9780000000300"
measure "/library/title%3Abook%2005000%7Cwriter15"
