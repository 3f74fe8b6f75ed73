#!/usr/bin/env bash
# Spine-matching benchmark on the library data set (catalogue.csv + annotations-dev.csv, see its README):
# imports the catalogue through the real importer into a temporary database, matches every usable spine's
# OCR text, and prints top-1 accuracy (overall and by text length), the auto-accept rate and the wrong
# matches among accepted, how many not-in-catalogue spines are auto-accepted, and ms per spine, beside a
# plain character-trigram TF-IDF baseline run on the same data. Then the acceptance rule, before and after,
# fitted on all images beside cross-validated over folds of whole images (the figures to expect on photos
# the rule was not tuned on). The data is never copied into the repository.
#
#   scripts/bench-match.sh DATASET_DIR [--limit N]
#
# BENCH_MATCH_ERRORS=1 also lists every wrong top-1 and every not-in-catalogue spine accepted.
set -euo pipefail

if [ $# -lt 1 ] || [ ! -f "$1/catalogue.csv" ] || [ ! -f "$1/annotations-dev.csv" ]; then
    echo "usage: scripts/bench-match.sh DATASET_DIR [--limit N] [--photos FOLDER]   (DATASET_DIR: the folder with catalogue.csv and annotations-dev.csv)" >&2
    exit 2
fi
dataset="$(cd "$1" && pwd)"
shift
arguments=() photos=""
while [ $# -gt 0 ]; do
    case "$1" in
        --photos) photos="$(cd "$2" && pwd)"; shift 2 ;;
        *) arguments+=("$1"); shift ;;
    esac
done
cd "$(dirname "$0")/.."
# Release, with the static Swift runtime, as the README builds shelfd: the per-spine time is the deployed one.
swift build -c release --static-swift-stdlib --product shelfd-bench-match
bin="$(swift build -c release --static-swift-stdlib --show-bin-path)"
if [ -n "$photos" ]; then
    swift build -c release --static-swift-stdlib --product shelfd
    readings=$(mktemp)
    trap 'rm -f "$readings"' EXIT
    "$bin/shelfd" eval --truth "$photos" --provider ocr --catalogue "$dataset/catalogue.csv" --add-listed-books --json \
        > "$readings" 2>/dev/null
    arguments+=(--photos "$photos" --readings "$readings")
fi
"$bin/shelfd-bench-match" "$dataset" ${arguments[@]+"${arguments[@]}"}
