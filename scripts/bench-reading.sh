#!/usr/bin/env bash
# Offline reading benchmark on shelves whose books are listed: `shelfd eval --provider ocr --add-listed-books` on each
# folder given (photos beside their `.truth.json` lists, as docs/reading.md, "Measuring a provider", describes), each folder's
# books added to the catalogue among CATALOGUE's, for this build and, with --baseline, another shelfd binary (an
# earlier build) in the same run on the same machine, then each figure's ratio to the baseline's: books accepted right,
# found, accepted wrong, seconds a photo, items in the results per listed book (what a person sees) and scraps per
# listed book (items left for review that are no listed book: questions without a right answer). With --titles-only,
# each folder is also measured as a list of titles only, as many people keep theirs: the same photos, their truth files
# without authors (so the books are added to the catalogue without them). No network.
# With --photos DIR, a FOLDER may hold truth files alone, for photos kept elsewhere: each truth file's photo is taken
# from DIR (Benchmarks/Labels/library-dataset labels the library data set's two photos, which stay in ../shared).
# Builds the release binary first (the README's build). Needs jq (scripts/install-deps.sh installs it).
#
#   scripts/bench-reading.sh --catalogue CSV [--baseline PATH] [--titles-only] [--photos DIR] FOLDER…
#
# e.g. scripts/bench-reading.sh --catalogue ../shared/data/library-dataset/catalogue.csv \
#          --baseline /tmp/shelfd-before ../shared/data/home-shelf samples
set -euo pipefail

catalogue="" baseline="" titles_only=0 photos="" folders=()
while [ $# -gt 0 ]; do
    case "$1" in
        --titles-only) titles_only=1; shift ;;
        --catalogue) catalogue="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
        --baseline) baseline="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"; shift 2 ;;
        --photos) photos="$(cd "$2" && pwd)"; shift 2 ;;
        *) folders+=("$(cd "$1" && pwd)"); shift ;;
    esac
done
if [ -z "$catalogue" ] || [ ${#folders[@]} -eq 0 ]; then
    echo "usage: scripts/bench-reading.sh --catalogue CSV [--baseline PATH] [--titles-only] [--photos DIR] FOLDER…" >&2
    exit 2
fi
cd "$(dirname "$0")/.."
swift build -c release --static-swift-stdlib --product shelfd
current="$(swift build -c release --static-swift-stdlib --show-bin-path)/shelfd"

# The overall figures of one binary on one folder: accepted right, found, expected, wrong among accepted, s a photo,
# items in the results (books a person sees), and scraps (items left for review that are no listed book).
measure() {
    "$1" eval --truth "$2" --provider ocr --catalogue "$catalogue" --add-listed-books --json 2>/dev/null \
        | jq -r '([.providers[].photos[].books[] | select(.status == "needs_review" and .truth == null)] | length) as $scraps
            | .overall | "\(.accepted_right) \(.found) \(.expected) \(.accepted_wrong) \(.seconds_per_photo) \(.reported) \($scraps)"'
}
per_book() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "–"; else printf "%.2f", a / b }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "–"; else printf "%.2f", a / b }'; }

# A folder's photos with their truth files' authors taken away: a list's `authors` emptied, a document's `author`s
# removed. Named "<folder>, titles only" in the table.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Truth files whose photos are in --photos: a folder of both, by the truth folder's name.
if [ -n "$photos" ]; then
    for i in "${!folders[@]}"; do
        folder="${folders[$i]}" joined="$scratch/$(basename "${folders[$i]}")"
        mkdir -p "$joined"
        for truth in "$folder"/*.truth.json; do
            name=$(basename "$truth" .truth.json)
            ln -s "$truth" "$joined/"
            for photo in "$folder/$name".* "$photos/$name".*; do
                case "$photo" in *.truth.json) ;; *) [ -e "$photo" ] && ln -sf "$photo" "$joined/" ;; esac
            done
        done
        folders[$i]="$joined"
    done
fi
if [ $titles_only -eq 1 ]; then
    for folder in "${folders[@]}"; do
        derived="$scratch/$(basename "$folder"), titles only"
        mkdir -p "$derived"
        for file in "$folder"/*; do
            case "$file" in
                *.truth.json) jq 'if type == "array" then map(.authors = []) else .books |= map(del(.author)) end' \
                    "$file" > "$derived/$(basename "$file")" ;;
                *) ln -s "$file" "$derived/" ;;
            esac
        done
        folders+=("$derived")
    done
fi

printf '%-28s %-10s %16s %10s %18s %12s %12s %12s\n' folder binary "accepted right" found "wrong/accepted" "s a photo" \
    "items/book" "scraps/book"
for folder in "${folders[@]}"; do
    read -r right found expected wrong seconds items scraps <<< "$(measure "$current" "$folder")"
    name=$(basename "$folder")
    printf '%-28s %-10s %10s of %-3s %10s %12s of %-3s %12.2f %12s %12s\n' "$name" this "$right" "$expected" "$found" \
        "$wrong" "$((right + wrong))" "$seconds" "$(per_book "$items" "$expected")" "$(per_book "$scraps" "$expected")"
    if [ -n "$baseline" ]; then
        read -r b_right b_found _ b_wrong b_seconds b_items b_scraps <<< "$(measure "$baseline" "$folder")"
        printf '%-28s %-10s %10s of %-3s %10s %12s of %-3s %12.2f %12s %12s\n' "" baseline "$b_right" "$expected" \
            "$b_found" "$b_wrong" "$((b_right + b_wrong))" "$b_seconds" "$(per_book "$b_items" "$expected")" \
            "$(per_book "$b_scraps" "$expected")"
        printf '%-28s %-10s %16s %10s %18s %12s %12s %12s\n' "" "ratio" "$(ratio "$right" "$b_right")" \
            "$(ratio "$found" "$b_found")" "$(ratio "$wrong" "$b_wrong")" "$(ratio "$seconds" "$b_seconds")" \
            "$(ratio "$items" "$b_items")" "$(ratio "$scraps" "$b_scraps")"
    fi
done
