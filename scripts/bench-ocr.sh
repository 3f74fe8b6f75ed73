#!/usr/bin/env bash
# Offline reader benchmark: PP-OCR and Tesseract in one run on this machine, with no network (`--provider ocr`,
# `[enrich] sources = ["catalogue"]`, no key):
#   - samples/ through `shelfd eval`: recall, precision, share left for review, seconds per photo;
#   - the library data set's two 12-megapixel shelf photos with its catalogue.csv as the catalogue: books accepted,
#     books offered for review, seconds per photo, the process's peak RSS, and a page per engine showing each
#     book's spine beside its title, so that a person can count the right ones (the photos have no labels);
#   - PP-OCR's detector, classifier and recogniser: milliseconds per photo and their share of the photo's time.
# Builds the release binary first (the README's build). Needs jq and GNU time (scripts/install-deps.sh installs them).
#
#   scripts/bench-ocr.sh [DATASET_DIR] [--out DIR]     (default: ../shared/data/library-dataset, .build/bench-ocr)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

dataset="" out="$repo/.build/bench-ocr"
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out="$2"; shift 2 ;;
        *) dataset="$1"; shift ;;
    esac
done
# The shared data set sits beside the repository (or beside a parent, for a worktree).
if [ -z "$dataset" ]; then
    for dir in .. ../.. ../../..; do
        if [ -d "$dir/shared/data/library-dataset" ]; then dataset="$dir/shared/data/library-dataset"; break; fi
    done
fi
if [ -z "$dataset" ] || [ ! -f "$dataset/catalogue.csv" ]; then
    echo "usage: scripts/bench-ocr.sh [DATASET_DIR] [--out DIR]   (the folder with catalogue.csv and the library photos)" >&2
    exit 2
fi
dataset="$(cd "$dataset" && pwd)"
for tool in jq /usr/bin/time; do
    command -v "$tool" >/dev/null || { echo "bench-ocr: $tool is missing; scripts/install-deps.sh installs it" >&2; exit 2; }
done

swift build -c release --static-swift-stdlib --product shelfd
shelfd="$(swift build -c release --static-swift-stdlib --show-bin-path)/shelfd"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out" "$work/library"
# The library photos, each with a truth file that lists no books: eval then shows them as accepted or for review.
photos=(one_shelf_example.jpg two_shelves_example.jpg)
for photo in "${photos[@]}"; do
    ln -s "$dataset/$photo" "$work/library/$photo"
    printf '{"schema": "shelfd.truth/1", "photo": "%s", "books": []}\n' "$photo" > "$work/library/$photo.truth.json"
done

engines=(ppocr tesseract)
for engine in "${engines[@]}"; do
    printf '[paths]\nroot = "%s"\n[enrich]\nsources = ["catalogue"]\n[ocr]\nengine = "%s"\n' \
        "$work/root-$engine" "$engine" > "$work/$engine.toml"
    echo "bench-ocr: $engine on samples/" >&2
    "$shelfd" eval --config "$work/$engine.toml" --truth samples --provider ocr --catalogue samples/catalogue.csv \
        --json --log-level debug > "$work/$engine-samples.json" 2> "$work/$engine-samples.log"
    echo "bench-ocr: $engine on the library photos" >&2
    /usr/bin/time -f '%M' -o "$work/$engine-library.rss" \
        "$shelfd" eval --config "$work/$engine.toml" --truth "$work/library" --provider ocr --catalogue "$dataset/catalogue.csv" \
        --json --html "$out/library-$engine.html" --log-level debug > "$work/$engine-library.json" 2> "$work/$engine-library.log"
done

echo
echo "samples/ through shelfd eval (rendered shelves, their catalogue)"
printf '%-10s %8s %10s %8s %8s\n' engine recall precision review s/photo
for engine in "${engines[@]}"; do
    jq -r '.providers[0].score | [.right, .expected, .reported, (.needs_review_share // 0), (.seconds_per_photo // 0)] | @tsv' \
        "$work/$engine-samples.json" |
        awk -v e="$engine" -F'\t' '{ printf "%-10s %8.3f %10.3f %7.1f%% %8.2f\n", e, $1 / $2, ($3 ? $1 / $3 : 0), 100 * $4, $5 }'
done

echo
echo "library photos ($(basename "$dataset")), its catalogue.csv imported: accepted without asking, offered for review"
printf '%-10s %-26s %9s %7s %8s\n' engine photo accepted review seconds
for engine in "${engines[@]}"; do
    jq -r '.providers[0].photos[] | [.photo, (.score.reported - .score.needs_review), .score.needs_review, .score.seconds] | @tsv' \
        "$work/$engine-library.json" |
        awk -v e="$engine" -F'\t' '{ printf "%-10s %-26s %9d %7d %8.2f\n", e, $1, $2, $3, $4 }'
    printf '%-10s peak RSS %d MB (the whole eval: catalogue import, reading, the page)\n' "$engine" \
        $(( $(tail -1 "$work/$engine-library.rss") / 1024 ))
done

echo
echo "PP-OCR's models, milliseconds per photo (share of the photo's seconds: preparing, reading, matching)"
printf '%-10s %10s %11s %11s\n' photos detector classifier recogniser
for set in samples library; do
    seconds=$(jq '.providers[0].score.seconds' "$work/ppocr-$set.json")
    grep -o 'ocr.classifier_ms=[0-9]* ocr.detector_ms=[0-9]* ocr.lines=[0-9]* ocr.recogniser_ms=[0-9]*' "$work/ppocr-$set.log" |
        tr '=' ' ' |
        awk -v set="$set" -v seconds="$seconds" '
            { c += $2; d += $4; r += $8; n++ }
            END {
                if (n == 0) { printf "%-10s no stage times logged\n", set; exit }
                t = seconds * 1000
                printf "%-10s %5d (%2d%%) %6d (%2d%%) %6d (%2d%%)\n", set, d / n, 100 * d / t, c / n, 100 * c / t, r / n, 100 * r / t
            }'
done

echo
for engine in "${engines[@]}"; do echo "page: $out/library-$engine.html"; done
