#!/usr/bin/env bash
# Preprocessing benchmark: median ms and peak RSS of Preprocessor.prepare for each preset on a generated
# 12-megapixel JPEG (and its HEIC twin, and the shared data set's real photos when present), beside
# libjpeg-turbo's `djpeg -scale M/8 | cjpeg -quality Q` doing the same scaling (for HEIC, after libheif's own
# `heif-convert`), in the same run.
#
#   scripts/bench-preprocess.sh [--runs N] [--photo FILE.jpg]…
set -euo pipefail

cd "$(dirname "$0")/.."
# djpeg and cjpeg (and GNU time, for the pipeline's peak RSS) are only needed here, not to build shelfd.
missing=()
command -v djpeg >/dev/null && command -v cjpeg >/dev/null || missing+=(libjpeg-turbo-progs)
command -v heif-convert >/dev/null || missing+=(libheif-examples)      # the HEIC row's reference
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "bench-preprocess: installing ${missing[*]}"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
fi
# The real phone photos, when the shared data set sits beside the repository (or a parent, for a worktree).
extra=()
for dir in .. ../.. ../../..; do
    if [ -d "$dir/shared/data/library-dataset" ]; then
        extra=(--photo "$dir/shared/data/library-dataset/one_shelf_example.jpg")
        break
    fi
done
swift build -c release --static-swift-stdlib --product shelfd-bench-preprocess
exec "$(swift build -c release --static-swift-stdlib --show-bin-path)/shelfd-bench-preprocess" "${extra[@]}" "$@"
